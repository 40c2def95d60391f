// The requester record's admission decision (ADR 0020), a pure function of the request: a
// TemplateInstance (or TemplateInstanceSet) gets the creating user written into
// `stencil.dev/requester` when it is created, and nobody but the operator may write or change it
// afterwards. The operator is trusted with it because it copies a Set's requester into the
// instances the Set stamps.
import type { KubeObject } from '../api/object-meta.ts';
import { ANNOTATION_REQUESTER } from '../api/well-known.ts';
import { formatRequester, requesterFrom } from '../engine/sources/requester.ts';
import type { AdmissionRequest, Decision, JsonPatchOperation } from './admission.ts';

const FIELD = `metadata.annotations["${ANNOTATION_REQUESTER}"]`;

const recorded = (object: KubeObject | null | undefined): string | undefined =>
  object?.metadata.annotations?.[ANNOTATION_REQUESTER];

/** Sets the annotation on `object`, creating the annotations map when it has none. */
function setAnnotation(object: KubeObject, value: string): JsonPatchOperation[] {
  if (!object.metadata.annotations)
    return [{ op: 'add', path: '/metadata/annotations', value: { [ANNOTATION_REQUESTER]: value } }];
  // RFC 6901: "/" in a key is written "~1".
  const key = ANNOTATION_REQUESTER.replace(/~/g, '~0').replace(/\//g, '~1');
  return [{ op: 'add', path: `/metadata/annotations/${key}`, value }];
}

export function decideRequester(request: AdmissionRequest, operatorUsername: string): Decision {
  const object = request.object;
  if (!object) return { allowed: true };
  const byOperator = operatorUsername !== '' && request.userInfo.username === operatorUsername;
  const next = recorded(object);
  if (request.operation === 'CREATE') {
    if (byOperator) return { allowed: true };
    if (next !== undefined)
      return {
        allowed: false,
        message: `${FIELD} is written by Stencil's admission webhook with the user who creates the object; remove it from the manifest`,
      };
    const requester = requesterFrom(request.userInfo);
    // Anonymous requests record nobody: such an instance's reads are all refused.
    if (!requester) return { allowed: true };
    return { allowed: true, patch: setAnnotation(object, formatRequester(requester)) };
  }
  if (request.operation !== 'UPDATE') return { allowed: true };
  const previous = recorded(request.oldObject);
  if (next === previous || byOperator) return { allowed: true };
  // A re-apply from a manifest that never had the annotation (server-side apply removes fields
  // its manager no longer lists) keeps the record instead of failing.
  if (next === undefined && previous !== undefined)
    return { allowed: true, patch: setAnnotation(object, previous) };
  return {
    allowed: false,
    message: `${FIELD} records who created the object and may not be changed; create a new object to act as another user`,
  };
}
