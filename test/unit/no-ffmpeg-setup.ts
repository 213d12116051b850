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

  const refusingTools = <F extends AnyFunction>(real: F, custom: symbol): F => {
    const wrapped = (file: unknown, ...rest: unknown[]) => {
      if (typeof file === "string" && TOOLS.test(file)) throw new Error(`${file} does not run in the unit project: a test that needs it belongs under test/render`);
      return (real as unknown as (...args: unknown[]) => unknown)(file, ...rest);
    };
    // promisify(execFile) resolves with {stdout, stderr} through this.
    const promisified = (real as unknown as { [key: symbol]: AnyFunction | undefined })[custom];
    if (promisified) Object.assign(wrapped, { [custom]: refusingTools(promisified, custom) });
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
