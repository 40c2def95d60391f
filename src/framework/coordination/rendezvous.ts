// Rendezvous (highest-random-weight) hashing: every member scores every key and the highest
// score owns it. A member joining takes only the keys it now scores highest on, and a member
// leaving hands out only its own keys, each to the member that scored second; nothing else
// moves, and every replica computes the same owner from the same member list with no state.
import { createHash } from 'node:crypto';

function score(member: string, key: string): bigint {
  // A NUL separator keeps ("ab", "c") and ("a", "bc") apart.
  return createHash('sha256').update(member).update('\0').update(key).digest().readBigUInt64BE(0);
}

/** The member that owns `key`, or undefined when there are no members. Ties go to the smaller name. */
export function ownerOf(key: string, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = -1n;
  for (const member of members) {
    const s = score(member, key);
    if (s > bestScore || (s === bestScore && best !== undefined && member < best)) {
      best = member;
      bestScore = s;
    }
  }
  return best;
}

/**
 * `ownerOf` for one member list, remembered per key: a replica asks about the same few hundred
 * namespaces on every event, and the list changes only when membership does.
 */
export class Assignment {
  private readonly owners = new Map<string, string | undefined>();

  constructor(readonly members: readonly string[]) {}

  owner(key: string): string | undefined {
    if (!this.owners.has(key)) this.owners.set(key, ownerOf(key, this.members));
    return this.owners.get(key);
  }
}
