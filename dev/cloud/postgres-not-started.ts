/** The embedded PostgreSQL could not start; the message says why and what to do, for a person to read. */
export class PostgresNotStarted extends Error {}
