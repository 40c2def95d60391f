// The unit project's only setup: some of its tests run the built `stencil` binary, so dist/ is
// built first when it is missing or stale (`npm run test:unit` on a fresh clone).
import { buildIfNeeded } from '../../tools/build-if-needed.ts';

export function setup(): void {
  buildIfNeeded((line) => console.log(`[unit] ${line}`));
}
