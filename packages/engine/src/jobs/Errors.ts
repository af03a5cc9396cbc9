import { Schema } from "effect"

/** No background job with that id in the sandbox. */
export class JobNotFound extends Schema.TaggedError<JobNotFound>()("JobNotFound", {
  id: Schema.String,
  jobId: Schema.String
}) {
  override get message(): string {
    return `sandbox ${this.id} has no job ${this.jobId} (\`prbox jobs ${this.id}\` lists them)`
  }
}
