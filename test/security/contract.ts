/**
 * The contract's response shapes, written from the API reference: what every 2xx body and every
 * error body of the public routes must look like. Strict objects, so a field the contract does
 * not have (an internal id, a storage key) fails the check as surely as a missing one.
 */
import { expect } from "vitest";
import { z } from "zod";
import { COMPLEXITY_LEVELS } from "../../domain/edl/complexity";
import { JOB_STATUSES } from "../../domain/jobs";
import { PLAN_IDS } from "../../domain/plans";
import { PRESET_CATEGORIES } from "../../domain/presets/definitions";
import type { Incoming } from "./client";

const iso = z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
const uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
const count = z.number().int().nonnegative();
const jobPath = z.string().regex(/^\/api\/v1\/jobs\/[0-9a-f-]{36}$/);
const user = z.strictObject({ remainingJobs: count, plan: z.string().min(1) });
const nonEmptyStrings = z.array(z.string().min(1)).min(1);

export const creationResponse = z.strictObject({
  id: uuid,
  status: z.literal("queued"),
  preset: z.string(),
  inputUrl: z.string(),
  webhookUrl: z.string().nullable(),
  createdAt: iso,
  estimatedProcessingTime: z.string().min(1),
  links: z.strictObject({ self: jobPath, cancel: jobPath }),
  user,
});

/** What the full read and the list item share. */
const jobFields = {
  id: uuid,
  status: z.enum(JOB_STATUSES),
  preset: z.string(),
  inputUrl: z.string(),
  outputUrl: z.string().url().nullable(),
  playbackUrl: z.string().url().nullable(),
  expiration: iso.nullable(),
  duration: z.number().nullable(),
  errorMessage: z.string().nullable(),
};

export const jobRead = z.strictObject({
  ...jobFields,
  retryCount: count,
  progress: z.number().min(0).max(1).nullable(),
  metadata: z.strictObject({
    createdAt: iso,
    startedAt: iso.nullable(),
    completedAt: iso.nullable(),
    lastCheckedAt: iso.nullable(),
  }),
  clientMetadata: z.record(z.string(), z.unknown()),
  links: z.strictObject({ self: jobPath, cancel: jobPath.optional(), output: z.string().optional() }),
});

const listItem = z.strictObject({
  ...jobFields,
  createdAt: iso,
  startedAt: iso.nullable(),
  completedAt: iso.nullable(),
  links: z.strictObject({ self: jobPath }),
});

const listLink = z.string().regex(/^\/api\/v1\/jobs\?/);
export const jobList = z.strictObject({
  jobs: z.array(listItem),
  pagination: z.strictObject({
    page: z.number().int().min(1),
    limit: z.number().int().min(1).max(100),
    totalPages: count,
    totalCount: count,
    hasNext: z.boolean(),
    hasPrev: z.boolean(),
  }),
  links: z.strictObject({ self: listLink, next: listLink.nullable(), prev: listLink.nullable() }),
});

export const cancelResponse = z.strictObject({
  id: uuid,
  status: z.literal("cancelled"),
  message: z.string().min(1),
  cancelledAt: iso,
});

export const downloadUrlResponse = z.strictObject({
  downloadUrl: z.string().url(),
  expiresAt: iso,
  message: z.string().min(1),
});

const complexity = z.enum(COMPLEXITY_LEVELS);
const estimate = z.strictObject({ processingTime: z.string().min(1), complexity });

export const edlCreation = z.strictObject({
  id: uuid,
  status: z.literal("queued"),
  type: z.literal("edl"),
  webhookUrl: z.string().nullable(),
  createdAt: iso,
  stats: z.strictObject({ clips: count, duration: z.number().nonnegative(), tracks: count, complexity }),
  estimate,
  links: z.strictObject({ self: jobPath, cancel: jobPath }),
  user,
  warnings: nonEmptyStrings.optional(),
});

export const edlValidation = z
  .strictObject({
    valid: z.boolean(),
    errors: nonEmptyStrings.optional(),
    warnings: nonEmptyStrings.optional(),
    stats: z.strictObject({
      clips: count,
      duration: z.number().nonnegative(),
      tracks: count,
      assets: count,
      complexity,
      features: z.array(z.string()),
    }),
    estimate,
    plan: z.strictObject({ current: z.enum(PLAN_IDS), canProcess: z.boolean() }),
  })
  .refine(
    (v) => v.valid === (v.errors === undefined) && v.plan.canProcess === v.valid,
    "valid, errors and canProcess disagree",
  );

const preset = z.strictObject({
  id: z.string().min(1),
  name: z.string().min(1),
  category: z.enum(PRESET_CATEGORIES),
  specifications: z.strictObject({
    videoCodec: z.string().optional(),
    audioCodec: z.string().optional(),
    resolution: z
      .string()
      .regex(/^\d+x\d+$/)
      .optional(),
    maxrate: z
      .string()
      .regex(/^\d+k$/)
      .optional(),
    crf: z.number().int().optional(),
  }),
  estimatedProcessingTime: z.string().min(1),
  requiredPlan: z.enum(PLAN_IDS),
  available: z.boolean(),
  upgradeMessage: z.string().min(1).optional(),
});

export const presetList = z.strictObject({
  presets: z.array(preset).min(1),
  meta: z.strictObject({
    userPlan: z.enum(PLAN_IDS),
    totalPresets: z.literal(23),
    availablePresets: count,
    lockedPresets: count,
    categories: z.array(z.enum(PRESET_CATEGORIES)).length(8),
    stats: z.strictObject({
      total: z.literal(23),
      byCategory: z.record(z.string(), count),
      byPlan: z.record(z.string(), count),
      byType: z.record(z.string(), count),
    }),
  }),
  links: z.strictObject({ self: z.literal("/api/v1/presets"), jobs: z.literal("/api/v1/jobs") }),
});

const signedLink = z.url().refine((url) => new URL(url).searchParams.has("X-Amz-Signature"), "a signed link");

/** An upload (docs/uploads.md): its upload URLs while pending, the link to its object unless expired. */
export const uploadResponse = z.strictObject({
  id: uuid,
  status: z.enum(["pending", "completed", "expired", "deleted"]),
  filename: z.string().min(1).max(255).nullable(),
  contentType: z.string().min(3).max(127),
  size: z.number().int().positive(),
  uploadUrl: signedLink.optional(),
  partSize: z
    .number()
    .int()
    .min(8 * 1024 * 1024)
    .optional(),
  parts: z
    .array(z.strictObject({ partNumber: z.number().int().min(1).max(10_000), size: count, url: signedLink }))
    .min(2)
    .optional(),
  inputUrl: signedLink.optional(),
  expiresAt: iso,
  deletesAt: iso,
  createdAt: iso,
});

export const UNAUTHORIZED = {
  error: "Unauthorized",
  message: "Missing or invalid API key. Use the header Authorization: Bearer spk_xxx or Bearer sk_xxx",
};

const details = z.array(z.strictObject({ field: z.string().min(1), message: z.string().min(1) })).min(1);
const message = z.string().min(1);

/** The `error` classes the contract lists, with the extra fields each carries. */
const ERROR_BODIES = {
  "Invalid JSON": z.strictObject({ error: z.literal("Invalid JSON"), message }),
  "Validation error": z.strictObject({
    error: z.literal("Validation error"),
    message: z.literal("Invalid request parameters"),
    details,
  }),
  "Invalid preset": z.strictObject({
    error: z.literal("Invalid preset"),
    message,
    availablePresets: z.array(z.string()).length(23),
  }),
  "Invalid operation": z.strictObject({ error: z.literal("Invalid operation"), message }),
  "EDL validation failed": z.strictObject({
    error: z.literal("EDL validation failed"),
    message,
    errors: nonEmptyStrings,
  }),
  Unauthorized: z.strictObject({ error: z.literal("Unauthorized"), message: z.literal(UNAUTHORIZED.message) }),
  PRESET_NOT_ALLOWED: z.strictObject({
    error: z.literal("PRESET_NOT_ALLOWED"),
    code: z.literal("PRESET_NOT_ALLOWED"),
    message,
    availablePresets: z.array(z.string()).min(1),
    requiredPlan: z.enum(PLAN_IDS),
    yourPlan: z.enum(PLAN_IDS),
    upgradeMessage: message,
  }),
  "Not found": z.strictObject({ error: z.literal("Not found"), message }),
  "Usage limit exceeded": z.strictObject({
    error: z.literal("Usage limit exceeded"),
    message,
    usage: z.strictObject({ current: count, limit: count, plan: z.string().min(1) }),
  }),
  // Ours, beside the contract's: Idempotency-Key conflicts and oversized bodies.
  Conflict: z.strictObject({ error: z.literal("Conflict"), message }),
  "Payload too large": z.strictObject({ error: z.literal("Payload too large"), message }),
} as const;

type ErrorClass = keyof typeof ERROR_BODIES;

const STATUS_OF: Record<ErrorClass, number> = {
  "Invalid JSON": 400,
  "Validation error": 400,
  "Invalid preset": 400,
  "Invalid operation": 400,
  "EDL validation failed": 400,
  Unauthorized: 401,
  PRESET_NOT_ALLOWED: 403,
  "Not found": 404,
  "Usage limit exceeded": 429,
  Conflict: 409,
  "Payload too large": 413,
};

function expectShape(schema: z.ZodType, res: Incoming, what: string) {
  const result = schema.safeParse(res.body);
  if (!result.success) {
    throw new Error(
      `${what}: ${res.status} body does not match the contract: ${z.prettifyError(result.error)}\n${res.text.slice(0, 1500)}`,
    );
  }
}

/**
 * An error answer as the contract gives it: `{error, message, …}` with the extras of its class,
 * at that class's status; `bare` routes (download-url) answer `{message}` alone for their own
 * 400/404/410 and the common shape for authentication and body-size failures.
 */
export function expectContractError(res: Incoming, opts: { bare?: boolean; allowed?: ErrorClass[] } = {}) {
  expect(res.status, res.text.slice(0, 500)).toBeGreaterThanOrEqual(400);
  expect(res.status, res.text.slice(0, 500)).toBeLessThan(500);
  expect(String(res.headers.get("content-type"))).toMatch(/^application\/json/);
  const body = res.body as Record<string, unknown> | undefined;
  if (opts.bare && (res.status === 400 || res.status === 404 || res.status === 410)) {
    expectShape(z.strictObject({ message }), res, "bare error");
    return;
  }
  const errorClass = body?.error as ErrorClass;
  if (typeof body !== "object" || body === null || !(errorClass in ERROR_BODIES)) {
    throw new Error(`${res.status} is not a contract error body: ${res.text.slice(0, 1500)}`);
  }
  if (opts.allowed && !opts.allowed.includes(errorClass))
    throw new Error(`unexpected error class ${errorClass}: ${res.text.slice(0, 1500)}`);
  expect(res.status, res.text.slice(0, 500)).toBe(STATUS_OF[errorClass]);
  expectShape(ERROR_BODIES[errorClass], res, errorClass);
}

/** A 2xx body of the given shape, served as JSON. */
export function expectContractBody(schema: z.ZodType, res: Incoming, status = 200) {
  expect(res.status, res.text.slice(0, 1500)).toBe(status);
  expect(String(res.headers.get("content-type"))).toMatch(/^application\/json/);
  expectShape(schema, res, `${status} body`);
}
