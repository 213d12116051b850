ALTER TABLE "jobs" ADD COLUMN "interruptions" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "dispatch" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "lease" integer DEFAULT 0 NOT NULL;