// TypeScript twins of the CEL `x-kubernetes-validations` rules in config/crd, keyed by the exact
// rule text. ajv cannot run CEL, so the offline validator evaluates these instead; a CRD rule
// without a twin here fails validator construction, which keeps the two from drifting apart.

type Self = Record<string, unknown>;
type Rule = (self: unknown) => boolean;

const has = (self: unknown, field: string): boolean =>
  typeof self === 'object' && self !== null && Object.hasOwn(self, field);

const isTrue = (self: unknown, field: string): boolean =>
  has(self, field) && (self as Self)[field] === true;

const str = (self: unknown): string => (typeof self === 'string' ? self : '');

const countSet = (self: unknown, fields: string[]): number =>
  fields.filter((f) => has(self, f)).length;

export const CEL_RULES: Readonly<Record<string, Rule>> = {
  '[has(self.handlebars)].filter(e, e).size() == 1': (self) => countSet(self, ['handlebars']) === 1,
  '!(has(self.required) && self.required && has(self.disableOverride) && self.disableOverride)': (
    self,
  ) => !(isTrue(self, 'required') && isTrue(self, 'disableOverride')),
  '!self.exists(n, n == "*") || self.size() == 1': (self) =>
    !Array.isArray(self) || !self.includes('*') || self.length === 1,
  '[has(self.secretKeyRef), has(self.configMapKeyRef), has(self.objectFieldRef)].filter(s, s).size() == 1':
    (self) => countSet(self, ['secretKeyRef', 'configMapKeyRef', 'objectFieldRef']) === 1,
  'self.startsWith(".")': (self) => str(self).startsWith('.'),
  '!(self.startsWith("{") && self.endsWith("}"))': (self) =>
    !(str(self).startsWith('{') && str(self).endsWith('}')),
};
