/** Imported as text (wrangler.toml [[rules]] type Text): served by the Worker, no CDN. */
declare module "*.css" {
  const text: string;
  export default text;
}
declare module "*/dashboard.js" {
  const text: string;
  export default text;
}
declare module "hls.js/dist/hls.light.min.js" {
  const text: string;
  export default text;
}
/** Its ES module build (dist/modern/esm/dash.all.min.js), which the page imports. */
declare module "dashjs" {
  const text: string;
  export default text;
}
