/**
 * The agent's DOCTOR evidence (protocol.md "DOCTOR"): the shape the agent sends, which the
 * `doctor` outcome carries as it came. The agent's grammar parses replies with this schema;
 * the `--json` schemas describe the `doctor` field with it.
 */
// zod/mini: the same schemas as `zod`'s, built with functions, so a bundle keeps only what it uses.
import * as z from 'zod/mini';

/** DOCTOR_RESULT JSON with status "observed". Unknown fields are kept. */
export const doctorObservedSchema = z.looseObject({
  requestId: z.string(),
  status: z.literal('observed'),
  detail: z.optional(z.string()),
  sessionId: z.string(),
  agentVersion: z.string(),
  pid: z.string(),
  javaVersion: z.string(),
  vmName: z.string(),
  workingDirectory: z.string(),
  watcherState: z.string(),
  buildHold: z.string(),
  watchedDirectoryCount: z.number(),
  unwatchableDirectoryCount: z.number(),
  watchSampleTruncated: z.boolean(),
  watchedDirectories: z.array(z.string()),
  buildOwnershipSupported: z.boolean(),
  verifySupported: z.boolean(),
  scanSupported: z.boolean(),
  reloadConfirmed: z.boolean(),
});
export type DoctorObserved = z.infer<typeof doctorObservedSchema>;
