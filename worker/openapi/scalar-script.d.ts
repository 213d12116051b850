/** Scalar's browser bundle, loaded as a text module (wrangler.toml [[rules]]). */
declare module "@scalar/api-reference/browser/standalone.js" {
  const source: string;
  export default source;
}
