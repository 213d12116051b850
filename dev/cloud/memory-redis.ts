type Value = string | Map<string, string>;

/**
 * The subset of Redis commands the service uses, in memory, for machines without a Redis.
 * Anything else fails loudly instead of pretending.
 */
export function createMemoryRedis() {
  const data = new Map<string, { value: Value; expiresAt?: number }>();
  const live = (key: string) => {
    const entry = data.get(key);
    if (entry?.expiresAt !== undefined && entry.expiresAt <= Date.now()) {
      data.delete(key);
      return undefined;
    }
    return entry;
  };
  const str = (key: string) => {
    const entry = live(key);
    if (entry && typeof entry.value !== "string")
      throw new Error("WRONGTYPE Operation against a key holding the wrong kind of value");
    return entry?.value as string | undefined;
  };
  const hash = (key: string) => {
    const entry = live(key);
    if (entry && !(entry.value instanceof Map))
      throw new Error("WRONGTYPE Operation against a key holding the wrong kind of value");
    return entry?.value as Map<string, string> | undefined;
  };
  const createdHash = (key: string) => {
    const existing = hash(key);
    if (existing) return existing;
    const created = new Map<string, string>();
    data.set(key, { value: created });
    return created;
  };
  const incrBy = (key: string, by: number) => {
    const current = Number(str(key) ?? "0");
    if (!Number.isInteger(current)) throw new Error("ERR value is not an integer or out of range");
    const next = current + by;
    data.set(key, { value: String(next), expiresAt: live(key)?.expiresAt });
    return next;
  };

  return function exec(command: string[]): unknown {
    const [name, ...args] = command;
    switch (name.toUpperCase()) {
      case "PING":
        return "PONG";
      case "GET":
        return str(args[0]) ?? null;
      case "MGET":
        return args.map((k) => str(k) ?? null);
      case "SET": {
        const [key, value, ...opts] = args;
        let expiresAt: number | undefined;
        let mode: "NX" | "XX" | undefined;
        for (let i = 0; i < opts.length; i++) {
          const opt = opts[i].toUpperCase();
          if (opt === "EX") expiresAt = Date.now() + Number(opts[++i]) * 1000;
          else if (opt === "PX") expiresAt = Date.now() + Number(opts[++i]);
          else if (opt === "NX" || opt === "XX") mode = opt;
          else throw new Error(`ERR unsupported SET option ${opt}`);
        }
        const exists = live(key) !== undefined;
        if ((mode === "NX" && exists) || (mode === "XX" && !exists)) return null;
        data.set(key, { value, expiresAt });
        return "OK";
      }
      case "DEL":
        return args.filter((k) => live(k) !== undefined && data.delete(k)).length;
      case "EXISTS":
        return args.filter((k) => live(k) !== undefined).length;
      case "INCR":
        return incrBy(args[0], 1);
      case "INCRBY":
        return incrBy(args[0], Number(args[1]));
      case "DECR":
        return incrBy(args[0], -1);
      case "EXPIRE": {
        const entry = live(args[0]);
        if (!entry) return 0;
        entry.expiresAt = Date.now() + Number(args[1]) * 1000;
        return 1;
      }
      case "TTL":
      case "PTTL": {
        const entry = live(args[0]);
        if (!entry) return -2;
        if (entry.expiresAt === undefined) return -1;
        const ms = entry.expiresAt - Date.now();
        return name.toUpperCase() === "TTL" ? Math.ceil(ms / 1000) : ms;
      }
      case "HSET": {
        const h = createdHash(args[0]);
        let added = 0;
        for (let i = 1; i + 1 < args.length; i += 2) {
          if (!h.has(args[i])) added++;
          h.set(args[i], args[i + 1]);
        }
        return added;
      }
      case "HGET":
        return hash(args[0])?.get(args[1]) ?? null;
      case "HGETALL":
        return [...(hash(args[0]) ?? new Map()).entries()].flat();
      default:
        throw new Error(`ERR command ${name} is not supported by the in-memory Redis stand-in; set REDIS_URL`);
    }
  };
}
