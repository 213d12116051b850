/**
 * QStash's retry-delay expressions (`Upstash-Retry-Delay`, the publish option `retryDelay`): the
 * milliseconds QStash waits before a message's next delivery, as arithmetic over `retried`, the
 * retries made before this one (0 before the first). The language is QStash's: numbers,
 * `retried`, `+ - * /`, parentheses, and the functions below; nothing else is accepted, so an
 * expression the Worker is configured with is one QStash itself would take. A parser of its own,
 * not a general expression library: those accept far more (variables, strings, member access)
 * than QStash does, and a setting they took could still be refused at the first publish.
 */

/** QStash's functions, by their arity (min and max take one or more). */
const FUNCTIONS: Record<string, { arity: number | "some"; apply: (...args: number[]) => number }> = {
  pow: { arity: 2, apply: (a, b) => a ** b },
  sqrt: { arity: 1, apply: Math.sqrt },
  abs: { arity: 1, apply: Math.abs },
  exp: { arity: 1, apply: Math.exp },
  floor: { arity: 1, apply: Math.floor },
  ceil: { arity: 1, apply: Math.ceil },
  round: { arity: 1, apply: Math.round },
  min: { arity: "some", apply: Math.min },
  max: { arity: "some", apply: Math.max },
};

const SUMS = { "+": (a: number, b: number) => a + b, "-": (a: number, b: number) => a - b };
const PRODUCTS = { "*": (a: number, b: number) => a * b, "/": (a: number, b: number) => a / b };

/** QStash waits at most a day between deliveries. */
export const MAX_RETRY_DELAY_MS = 86_400_000;

/** How long to wait before the next delivery, in milliseconds, given the retries made so far. */
export type RetryDelay = (retried: number) => number;

type Node = (retried: number) => number;

const TOKEN = /\s*(?:(\d+(?:\.\d+)?)|([A-Za-z_]\w*)|([-+*/(),]))/y;

function tokens(expression: string): string[] {
  const text = expression.trimEnd();
  const out: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(text);
    if (!m) throw new RangeError(`unexpected "${text.slice(at).trim()[0]}" at character ${at + 1}`);
    out.push(m[1] ?? m[2] ?? m[3]);
  }
  return out;
}

/**
 * The expression as a function of `retried`; a RangeError naming what is wrong when it is not one
 * of QStash's (a syntax error, an unknown name, a function given the wrong number of arguments).
 */
export function parseRetryDelay(expression: string): RetryDelay {
  const list = tokens(expression);
  if (list.length === 0) throw new RangeError("the expression is empty");
  let at = 0;
  const peek = () => list[at];
  const take = (expected?: string) => {
    const token = list[at];
    if (token === undefined)
      throw new RangeError(`the expression ends early${expected ? `: "${expected}" expected` : ""}`);
    if (expected !== undefined && token !== expected) throw new RangeError(`"${expected}" expected, found "${token}"`);
    at += 1;
    return token;
  };

  // sum := product (("+" | "-") product)*; product := unary (("*" | "/") unary)*; unary := "-" unary | atom
  /** Operands joined left to right by the operators of one precedence. */
  function joined(operators: Record<string, (a: number, b: number) => number>, operand: () => Node): Node {
    let left = operand();
    for (let token = peek(); token !== undefined && Object.hasOwn(operators, token); token = peek()) {
      take();
      const [apply, l, r] = [operators[token], left, operand()];
      left = (n) => apply(l(n), r(n));
    }
    return left;
  }
  const sum = (): Node => joined(SUMS, product);
  const product = (): Node => joined(PRODUCTS, unary);
  function unary(): Node {
    if (peek() === "-") {
      take();
      const operand = unary();
      return (n) => -operand(n);
    }
    if (peek() === "+") {
      take();
      return unary();
    }
    return atom();
  }
  function atom(): Node {
    const token = take();
    if (token === "(") {
      const inner = sum();
      take(")");
      return inner;
    }
    if (/^\d/.test(token)) {
      const value = Number(token);
      return () => value;
    }
    if (token === "retried") return (n) => n;
    if (!/^[A-Za-z_]/.test(token)) throw new RangeError(`unexpected "${token}"`);
    const fn = Object.hasOwn(FUNCTIONS, token) ? FUNCTIONS[token] : undefined;
    if (!fn) throw new RangeError(`unknown name "${token}": only retried and ${Object.keys(FUNCTIONS).join(", ")}`);
    take("(");
    const args = [sum()];
    while (peek() === ",") {
      take();
      args.push(sum());
    }
    take(")");
    if (fn.arity !== "some" && args.length !== fn.arity)
      throw new RangeError(`${token} takes ${fn.arity} argument${fn.arity === 1 ? "" : "s"}, given ${args.length}`);
    return (n) => fn.apply(...args.map((arg) => arg(n)));
  }

  const root = sum();
  if (at < list.length) throw new RangeError(`unexpected "${list[at]}" after the expression`);
  // A wait from nothing to QStash's cap of a day; a value that is not a number (0/0) waits nothing.
  return (retried) => {
    const ms = root(retried);
    return Number.isNaN(ms) ? 0 : Math.min(MAX_RETRY_DELAY_MS, Math.max(0, ms));
  };
}
