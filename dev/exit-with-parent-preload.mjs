// Preloaded (node --import) into the processes npm run dev starts, so that none outlives it.
// Their stdin is a pipe from the runner that it never writes to; the kernel closes the runner's
// end when its process is gone, however it went (a SIGKILL too), and the read side then ends.
// This process is then sent SIGTERM, the stop its own handlers know; with EXIT_WITH_PARENT=group
// its whole process group is (the Worker's server's, which holds workerd). Without EXIT_WITH_PARENT (a
// process started some other way), nothing happens: its stdin may not be such a pipe.
const what = process.env.EXIT_WITH_PARENT;
if (what === "process" || what === "group") {
  const target = what === "group" ? -process.pid : process.pid;
  process.stdin.on("end", () => process.kill(target, "SIGTERM"));
  process.stdin.on("error", () => process.kill(target, "SIGTERM"));
  process.stdin.resume();
  // Reading stdin must not keep the process alive once its own work is done.
  process.stdin.unref?.();
}
