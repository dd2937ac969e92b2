// spec.upgrade.maintenanceWindow: open from each start of its schedule for its duration. Pure (the clock is an
// input), with croner computing run times only, as for the backup schedule.
import { cronFor, parseRetentionAge } from '../backup-schedule.ts';

export interface MaintenanceWindow {
  schedule: string;
  duration: string;
  timezone?: string;
}

export interface WindowState {
  open: boolean;
  /** When it opens next (closed windows). */
  opensAt?: string;
}

export function windowState(window: MaintenanceWindow | undefined, now: Date): WindowState {
  if (!window) return { open: true };
  const durationMs = parseRetentionAge(window.duration) ?? 0;
  const cron = cronFor(window.schedule, window.timezone);
  const latest = cron.previousRuns(1, new Date(now.getTime() + 1))[0];
  if (latest && now.getTime() < latest.getTime() + durationMs) return { open: true };
  const next = cron.nextRun(now);
  return next ? { open: false, opensAt: next.toISOString() } : { open: false };
}
