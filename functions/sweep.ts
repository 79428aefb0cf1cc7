// Scheduled (every 15 minutes), not an HTTP route: the sweeper (docs/design/storage.md §7.4) deletes what changes
// over 100 items left when interrupted, found by their pending-commit markers, and finishes the grant-epoch stamping
// of changes that ran out of time (docs/design/rules.md, "A change on a large project"). One log line and one metric line a run.
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { sweepAfterMs } from '../lib/config/env';
import { logger } from '../lib/config/logger';
import { METRIC, hostPrintsRequests, metrics } from '../lib/http/metrics';
import { finishPendingStampings, sweep } from '../lib/storage';

/** How long a run stamps what changes left pending (its timeout is 300 s; the markers come first). */
const STAMPING_BUDGET_MS = 200_000;

export const handler = async () => {
  // Changes that ran out of time stamping the grant epoch (rules changes, revocations) are finished here.
  const result = {
    ...(await sweep(sweepAfterMs())),
    ...(await finishPendingStampings(Date.now() + STAMPING_BUDGET_MS)),
  };
  // A host that prints its own lines (the local server's readable format) says what the run did, if anything.
  if (hostPrintsRequests()) return result;
  logger.info('sweep', { ...result });
  metrics.addMetric(METRIC.sweptMarkers, MetricUnit.Count, result.markers);
  metrics.addMetric(METRIC.sweptAbandoned, MetricUnit.Count, result.abandoned);
  metrics.addMetric(METRIC.sweptSegments, MetricUnit.Count, result.deleted);
  metrics.publishStoredMetrics();
  return result;
};
