CREATE TABLE "stream_segments" (
	"job_id" uuid NOT NULL,
	"rendition" text NOT NULL,
	"index" integer NOT NULL,
	"duration" double precision NOT NULL,
	"start" double precision,
	"codecs" text,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "stream_segments_job_id_rendition_index_pk" PRIMARY KEY("job_id","rendition","index")
);
--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "stream" jsonb;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "playable_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "jobs" ADD COLUMN "playable_webhook_pending_since" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "stream_segments" ADD CONSTRAINT "stream_segments_job_id_jobs_id_fk" FOREIGN KEY ("job_id") REFERENCES "public"."jobs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "jobs_playable_webhook_pending_idx" ON "jobs" USING btree ("playable_webhook_pending_since") WHERE "jobs"."playable_webhook_pending_since" is not null;