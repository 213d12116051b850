// Preloaded into an encoder under test (NODE_OPTIONS=--import) by crashOnSignalEnv(): SIGUSR2
// makes it throw from a signal handler, outside any job, as a bug in the process itself would.
// Never in production.
process.on("SIGUSR2", () => {
  throw new Error("a fault outside any job, raised by the test through SIGUSR2");
});
