// Who asked for an instance, as admission recorded it (ADR 0020): under
// --authorize-sources=requester every valueFrom read is allowed only if this user may read the
// object themselves. Parsing is strict: an annotation that does not parse is no requester, so a
// hand-made or damaged record denies rather than grants.
import { ANNOTATION_REQUESTER } from '../../api/well-known.ts';
import { isMap } from '../shared/json-map.ts';

/** The user an admission request came from (the parts a SubjectAccessReview takes). */
export interface Requester {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** The admission request's userInfo, as the record stores it (stable key order). */
export function requesterFrom(userInfo: {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}): Requester | undefined {
  if (!userInfo.username) return undefined;
  const requester: Requester = { username: userInfo.username };
  if (userInfo.uid) requester.uid = userInfo.uid;
  if (userInfo.groups?.length) requester.groups = [...userInfo.groups];
  if (userInfo.extra && Object.keys(userInfo.extra).length > 0) requester.extra = userInfo.extra;
  return requester;
}

export function formatRequester(requester: Requester): string {
  return JSON.stringify(requester);
}

const isStringList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((v) => typeof v === 'string');

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Whether a parsed record has exactly the shapes admission writes. */
function isRequester(value: unknown): value is Requester {
  if (!isMap(value)) return false;
  const { username, uid, groups, extra } = value;
  return (
    typeof username === 'string' &&
    username !== '' &&
    (uid === undefined || typeof uid === 'string') &&
    (groups === undefined || isStringList(groups)) &&
    (extra === undefined || (isMap(extra) && Object.values(extra).every(isStringList)))
  );
}

/** The requester an object records; undefined when it records none or one that does not parse. */
export function requesterOf(object: {
  metadata: { annotations?: Record<string, string> };
}): Requester | undefined {
  const text = object.metadata.annotations?.[ANNOTATION_REQUESTER];
  const parsed = text === undefined ? undefined : parse(text);
  return isRequester(parsed) ? requesterFrom(parsed) : undefined;
}
