import { Duration, Effect, Schedule } from "effect"

const MAX_RECONNECT_DELAY = Duration.seconds(5)

/**
 * Reconnecting to a daemon that went away: 250 ms, doubling, at most 5 s —
 * quick when the daemon restarts, quiet when it stays down.
 */
export const reconnect: Schedule.Schedule<Duration.Duration> = Schedule.exponential("250 millis").pipe(
  Schedule.modifyDelay(({ duration }) => Effect.succeed(Duration.min(duration, MAX_RECONNECT_DELAY)))
)
