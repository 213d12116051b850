/** Where app.ts mounts the dashboard; every link and form action is built from it. */
const DASHBOARD = "/dashboard";

export const paths = {
  home: DASHBOARD,
  signIn: `${DASHBOARD}/signin`,
  /** Where every sign-up lands, new email or not (routes/auth.tsx says why). */
  signInAfterSignUp: `${DASHBOARD}/signin?from=signup`,
  signUp: `${DASHBOARD}/signup`,
  signOut: `${DASHBOARD}/signout`,
  keys: `${DASHBOARD}/keys`,
  revokeKey: (id: string) => `${DASHBOARD}/keys/${id}/revoke`,
  webhook: `${DASHBOARD}/webhook`,
  plan: `${DASHBOARD}/plan`,
  jobs: `${DASHBOARD}/jobs`,
  jobsTable: `${DASHBOARD}/jobs/table`,
  job: (id: string) => `${DASHBOARD}/jobs/${id}`,
  /** The job page's details and player alone, for its refresh while the job runs. */
  jobPanel: (id: string) => `${DASHBOARD}/jobs/${id}/panel`,
  download: (id: string) => `${DASHBOARD}/jobs/${id}/download`,
  output: (id: string) => `${DASHBOARD}/jobs/${id}/output`,
  file: (id: string, name: string) => `${DASHBOARD}/jobs/${id}/files/${name}`,
  upload: `${DASHBOARD}/upload`,
  /** The upload's steps, for the page's script (routes/uploads.tsx): it appends `/:id/parts/:n` and `/:id/complete`. */
  uploads: `${DASHBOARD}/uploads`,
  encodeUpload: (id: string) => `${DASHBOARD}/uploads/${id}/encode`,
  asset: (name: string) => `${DASHBOARD}/assets/${name}`,
  /** The interactive API reference the Worker serves beside the dashboard (worker/openapi/reference.ts). */
  reference: "/docs",
};
