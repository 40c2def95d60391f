// The Template custom resource (SPEC §1), mirroring config/crd/stencil.dev_templates.yaml.
import type { Condition } from './condition.ts';
import type { JsonValue, LabelSelector, ObjectMeta } from './object-meta.ts';

export type ParameterType = 'string' | 'number' | 'bool' | 'array' | 'object';
export type SyncMode = 'off' | 'revert' | 'strict';

export interface ParameterDeclaration {
  name: string;
  type?: ParameterType;
  /** Literal default: any JSON value. Ignored for `required` parameters. */
  value?: JsonValue;
  required?: boolean;
  disableOverride?: boolean;
  exposeInStatus?: boolean;
  description?: string;
}

export interface TargetNamespaces {
  explicit?: { allow?: { literal?: string[] } };
  selector?: LabelSelector;
}

export interface SyncSpec {
  mode?: SyncMode;
  ignoreFields?: string[];
}

export interface TemplateSpec {
  parameters?: ParameterDeclaration[];
  targetNamespaces?: TargetNamespaces;
  sync?: SyncSpec;
  sourceNamespaces?: string[];
  allowCrossNamespaceResources?: boolean;
  allowClusterScopedResources?: boolean;
  handlebars: string;
}

export type TemplatePhase = 'Valid' | 'Invalid' | 'Error';

export interface TemplateStatus {
  observedGeneration?: number;
  phase?: TemplatePhase;
  conditions?: Condition[];
}

export interface Template {
  apiVersion: string;
  kind: 'Template';
  metadata: ObjectMeta;
  spec: TemplateSpec;
  status?: TemplateStatus;
}
