/**
 * Setup of the unit project: FFmpeg and ffprobe cannot be started from it, so unit stays pure
 * and fast. A test that needs them belongs to the render project (test/render).
 */
import { vi } from "vitest";

// vi.mock is hoisted above everything else in the file, so its factory is made in vi.hoisted.
const { refusingFfmpeg } = vi.hoisted(() => {
  const TOOLS = /(^|\/)ff(mpeg|probe)$/;
  type AnyFunction = (...args: never[]) => unknown;
  type ChildProcessModule = typeof import("node:child_process");

  // The project shares one module cache across files (isolate: false), so the module this setup
  // wraps can be one an earlier file's run of it already wrapped: wrap each function once.
  const GUARDED = Symbol.for("vep.unit.refuses-ffmpeg");
  const refusing = (real: AnyFunction): AnyFunction => {
    if (GUARDED in real) return real;
    const wrapped = (file: unknown, ...rest: unknown[]) => {
      if (typeof file === "string" && TOOLS.test(file))
        throw new Error(`${file} does not run in the unit project: a test that needs it belongs under test/render`);
      return (real as unknown as (...args: unknown[]) => unknown)(file, ...rest);
    };
    return Object.assign(wrapped, { [GUARDED]: true });
  };
  const refusingTools = <F extends AnyFunction>(real: F, custom: symbol): F => {
    const wrapped = refusing(real);
    // promisify(execFile) resolves with {stdout, stderr} through this.
    const promisified = (real as unknown as { [key: symbol]: AnyFunction | undefined })[custom];
    if (promisified && wrapped !== real) Object.assign(wrapped, { [custom]: refusing(promisified) });
    return wrapped as unknown as F;
  };

  const refusingFfmpeg = async (importOriginal: () => Promise<ChildProcessModule>) => {
    const real = await importOriginal();
    const custom = (await import("node:util")).promisify.custom;
    const guarded = {
      spawn: refusingTools(real.spawn, custom),
      spawnSync: refusingTools(real.spawnSync, custom),
      execFile: refusingTools(real.execFile, custom),
      execFileSync: refusingTools(real.execFileSync, custom),
    };
    return { ...real, ...guarded, default: { ...real, ...guarded } };
  };
  return { refusingFfmpeg };
});

vi.mock("node:child_process", refusingFfmpeg);
vi.mock("child_process", refusingFfmpeg);
