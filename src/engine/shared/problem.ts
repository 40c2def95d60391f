// The engine's outcome type: a value, or problems that each name a field path and the
// condition reason a user will see.

export interface Problem {
  /** Kubernetes-style field path, e.g. `spec.parameters[0].valueFrom`. Empty for the whole object. */
  path: string;
  /** A condition reason from src/api/condition.ts (or a schema reason for validation). */
  reason: string;
  message: string;
  /**
   * The cluster, not an input, must change for this to pass (a rendered kind not served yet):
   * the instance is retried with backoff instead of waiting for an edit.
   */
  transient?: true;
  /**
   * Under a reason that is usually retried (a source read), this one gives the same answer for
   * the same inputs (a JSONPath that matches too much): it waits for an input, which is watched.
   */
  settled?: true;
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; problems: Problem[] };

export function success<T>(value: T): Outcome<T> {
  return { ok: true, value };
}

export function failure<T>(problems: Problem[]): Outcome<T> {
  return { ok: false, problems };
}

/** The first five problems, one-line each and `; `-joined, then how many more: a condition's message. */
export function summarizeProblems(problems: readonly Problem[]): string {
  const shown = problems.slice(0, 5).map(formatProblem);
  const more = problems.length > 5 ? `; and ${problems.length - 5} more` : '';
  return `${shown.join('; ')}${more}`;
}

/** `path: message`, the one-line form used in condition messages and CLI output. */
export function formatProblem(problem: Problem): string {
  return problem.path ? `${problem.path}: ${problem.message}` : problem.message;
}
