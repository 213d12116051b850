CREATE TABLE "job_parts" (
	"job_id" uuid NOT NULL,
	"index" integer NOT NULL,
	"first_frame" integer NOT NULL,
	"frame_count" integer NOT NULL,
	"state" text DEFAULT 'queued' NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"interruptions" integer DEFAULT 0 NOT NULL,
	"dispatch" integer DEFAULT 0 NOT NULL,
	"lease" integer DEFAULT 0 NOT NULL,
	"progress" real DEFAULT 0 NOT NULL,
	"heartbeat_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"message_id" text,
	"output_key" text,
	"error_message" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp (3) with time zone,
	CONSTRAINT "job_parts_job_id_index_pk" PRIMARY KEY("job_id","index")
);
--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "stage" text DEFAULT 'whole' NOT NULL;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "split" jsonb;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "scratch_pending_since" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "job_parts" ADD CONSTRAINT "job_parts_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "job_parts_state_heartbeat_idx" ON "job_parts" USING btree ("state","heartbeat_at");--> statement-breakpoint
CREATE INDEX "jobs_scratch_pending_idx" ON "jobs" USING btree ("scratch_pending_since") WHERE "jobs"."scratch_pending_since" is not null;