// One reconcile of one hostname: gather, decide (pure), carry out. What the work queue runs.
import type { Logger } from "@qrplatform/platform";
import type { ProcessResult } from "../kube/work-queue.js";
import { carryOut, NotLeader, type Effects } from "./apply.js";
import { gather, type Sources } from "./gather.js";
import { decide } from "./policy.js";

export function reconciler(
  sources: Sources,
  effects: Effects,
  logger: Logger,
): (hostname: string) => Promise<ProcessResult> {
  return async (hostname) => {
    if (!effects.isLeader()) return {};
    // The informer enqueues the CR again when the operator's own last write reaches it.
    const wait = effects.ownWrites.waitFor(hostname);
    if (wait > 0) return { requeueAfterMs: wait };
    const inputs = await gather(hostname, sources);
    const plan = decide(inputs);
    if (plan.idle) {
      logger.debug({ hostname, why: plan.idle }, "nothing to do");
      return {};
    }
    try {
      return await carryOut(plan, inputs, effects);
    } catch (error) {
      // The new leader reconciles every hostname when it takes over.
      if (error instanceof NotLeader) return {};
      throw error;
    }
  };
}
