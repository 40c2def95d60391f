// Static analysis of a Handlebars template body: parse errors, unknown helpers, references to
// undeclared parameters or unknown context fields, and constructs Stencil refuses (partials,
// decorators, triple-stash), each with the template's line and column. It also collects the
// `observed` calls, whose arguments must be literals so the producers are known before a render.
import type {} from 'handlebars'; // brings the global `hbs` AST namespace into scope
import { TemplateReason } from '../../api/condition.ts';
import { evaluateJsonPath } from '../shared/jsonpath.ts';
import {
  isSecretRef,
  OBSERVED_HELPER,
  OBSERVED_USAGE,
  type ObservedCall,
} from '../health/observed.ts';
import type { Problem } from '../shared/problem.ts';

type Node = hbs.AST.Node;
type Expression = hbs.AST.Expression;
type PathExpression = hbs.AST.PathExpression;

/** Block helpers that change the context (`this`) inside their body. */
const CONTEXT_CHANGING_BLOCKS = new Set(['each', 'with']);
export const BLOCK_HELPERS = new Set(['if', 'unless', 'each', 'with']);
/** `lookup` is the one built-in usable inline (dotted label keys). */
export const BUILTIN_INLINE_HELPERS = new Set(['lookup']);

/**
 * The `@` variables a template may read. Everything else in the data frame is Stencil's own
 * render bookkeeping (or Handlebars internals) and must stay out of the output.
 */
const DATA_VARIABLES = new Set(['root', 'index', 'key', 'first', 'last']);
const INSTANCE_FIELDS = new Set(['name', 'namespace', 'uid', 'labels', 'annotations']);
const TEMPLATE_FIELDS = new Set(['name', 'namespace', 'generation']);

export interface SyntaxRules {
  /** Declared parameter names. */
  parameters: ReadonlySet<string>;
  /** Inline helpers the environment provides. */
  helpers: ReadonlySet<string>;
}

interface Scope {
  /** How many context-changing blocks enclose this node. */
  depth: number;
  /** Block parameter names in scope (`{{#each xs as |x|}}`). */
  blockParams: ReadonlySet<string>;
}

export function position(node: Node): string {
  return node.loc
    ? `line ${node.loc.start.line}, column ${node.loc.start.column + 1}`
    : 'unknown position';
}

function problem(node: Node | undefined, message: string): Problem {
  return {
    path: 'spec.handlebars',
    reason: TemplateReason.ValidationFailed,
    message: node ? `${position(node)}: ${message}` : message,
  };
}

/** Walks an AST and reports every problem (not just the first). */
export class TemplateChecker {
  readonly problems: Problem[] = [];
  /** Every valid `observed` call, by the AST node that makes it (mustache or subexpression). */
  readonly observed = new Map<Node, ObservedCall>();

  constructor(private readonly rules: SyntaxRules) {}

  program(program: hbs.AST.Program, scope: Scope): void {
    for (const statement of program.body) this.statement(statement, scope);
  }

  private statement(node: hbs.AST.Statement, scope: Scope): void {
    switch (node.type) {
      case 'MustacheStatement':
        return this.mustache(node as hbs.AST.MustacheStatement, scope);
      case 'BlockStatement':
        return this.block(node as hbs.AST.BlockStatement, scope);
      case 'PartialStatement':
      case 'PartialBlockStatement':
        this.problems.push(problem(node, 'partials ({{> name}}) are not supported'));
        return;
      case 'Decorator':
      case 'DecoratorBlock':
        this.problems.push(problem(node, 'decorators ({{* name}}) are not supported'));
        return;
      default:
        return;
    }
  }

  private mustache(node: hbs.AST.MustacheStatement, scope: Scope): void {
    if (!node.escaped) {
      this.problems.push(
        problem(
          node,
          'triple-stash {{{ }}} is not allowed: it would let a value inject YAML; use toYaml/toJson/nindent',
        ),
      );
    }
    this.call(node, node.path, node.params, node.hash, scope);
  }

  private block(node: hbs.AST.BlockStatement, scope: Scope): void {
    const name = pathName(node.path);
    if (!name || !BLOCK_HELPERS.has(name)) {
      this.problems.push(
        problem(node, `unknown block helper "${name ?? '?'}" (blocks: if, unless, each, with)`),
      );
    }
    for (const expression of [...node.params, ...(node.hash?.pairs.map((p) => p.value) ?? [])]) {
      const inside = observedIn(expression);
      // A live value deciding a block could add or remove whole objects: observed is a value only.
      if (inside)
        this.problems.push(
          problem(
            inside,
            `observed cannot decide a block ({{#${name ?? '?'}}}): use it inside {{ }} as a value, e.g. ${OBSERVED_USAGE}`,
          ),
        );
    }
    node.params.forEach((p: Expression) => this.expression(p, scope));
    node.hash?.pairs.forEach((p: hbs.AST.HashPair) => this.expression(p.value, scope));
    const inner: Scope = CONTEXT_CHANGING_BLOCKS.has(name ?? '')
      ? {
          depth: scope.depth + 1,
          blockParams: new Set([...scope.blockParams, ...(node.program.blockParams ?? [])]),
        }
      : scope;
    this.program(node.program, inner);
    if (node.inverse) this.program(node.inverse, scope);
  }

  private call(
    node: Node,
    path: Expression,
    params: Expression[],
    hash: hbs.AST.Hash | undefined,
    scope: Scope,
  ): void {
    const isCall = params.length > 0 || (hash?.pairs.length ?? 0) > 0;
    if (isCall) {
      const name = pathName(path);
      if (!name || !(this.rules.helpers.has(name) || BUILTIN_INLINE_HELPERS.has(name))) {
        this.problems.push(problem(node, `unknown helper "${name ?? '?'}"`));
      } else if (name === 'required' && params[0] && params[0].type !== 'StringLiteral') {
        // Its message is shown as it is: from a value, it could carry a Secret into a condition.
        this.problems.push(
          problem(
            node,
            'the message of required must be a string literal: {{required "image is required" parameters.image}}',
          ),
        );
      } else if (name === OBSERVED_HELPER) {
        this.observedCall(node, params, hash);
      }
    } else if (pathName(path) === OBSERVED_HELPER) {
      this.problems.push(problem(node, `observed expects 4 arguments: ${OBSERVED_USAGE}`));
    } else {
      this.expression(path, scope);
    }
    params.forEach((p: Expression) => this.expression(p, scope));
    hash?.pairs.forEach((p: hbs.AST.HashPair) => this.expression(p.value, scope));
  }

  /**
   * The producer of an `observed` read must be known without rendering (to read it before the
   * render and to check its wave), so every argument is a string literal.
   */
  private observedCall(node: Node, params: Expression[], hash: hbs.AST.Hash | undefined): void {
    const fail = (message: string): void => {
      this.problems.push(problem(node, `${message}: ${OBSERVED_USAGE}`));
    };
    if (params.length !== 4) return fail('observed expects 4 arguments');
    if ((hash?.pairs.length ?? 0) > 0) return fail('observed takes no named arguments');
    const literal = params.map((p) =>
      p.type === 'StringLiteral' ? (p as hbs.AST.StringLiteral).value : undefined,
    );
    const names = ['apiVersion', 'kind', 'name', 'jsonpath'];
    const notLiteral = literal.findIndex((value) => value === undefined || value === '');
    if (notLiteral >= 0)
      return fail(
        `the ${names[notLiteral]} argument of observed must be a non-empty string literal`,
      );
    const [apiVersion, kind, name, jsonPath] = literal as [string, string, string, string];
    if (isSecretRef({ apiVersion, kind }))
      return fail(
        `observed cannot read a Secret ("${name}"): its value would be copied where nobody redacts it; pass Secret data with a secretKeyRef parameter instead`,
      );
    const path = evaluateJsonPath(jsonPath, {});
    if (!path.ok)
      return fail(
        `the jsonpath "${jsonPath}" of observed is not valid: ${path.problems.map((p) => p.message).join('; ')}`,
      );
    const start = node.loc?.start;
    this.observed.set(node, {
      apiVersion,
      kind,
      name,
      jsonPath,
      line: start?.line ?? 0,
      column: (start?.column ?? 0) + 1,
    });
  }

  private expression(node: Expression, scope: Scope): void {
    if (node.type === 'SubExpression') {
      const sub = node as hbs.AST.SubExpression;
      this.call(sub, sub.path, sub.params, sub.hash, scope);
    } else if (node.type === 'PathExpression') {
      this.reference(node as PathExpression, scope);
    }
  }

  private reference(path: PathExpression, scope: Scope): void {
    const parts = path.parts;
    if (path.data) {
      if (!DATA_VARIABLES.has(parts[0] ?? '')) {
        this.problems.push(
          problem(
            path,
            `unknown data variable "${path.original}" (templates may use @root, @index, @key, @first, @last)`,
          ),
        );
      } else if (parts[0] === 'root') this.rootReference(path, parts.slice(1));
      return;
    }
    if (parts.length === 0 || scope.blockParams.has(parts[0] ?? '')) return;
    if (scope.depth - path.depth === 0) this.rootReference(path, parts);
  }

  private rootReference(path: PathExpression, parts: string[]): void {
    const [head, field] = parts;
    if (head === undefined) return;
    if (head === 'parameters') {
      if (field !== undefined && !this.rules.parameters.has(field)) {
        this.problems.push(
          problem(path, `reference to undeclared parameter "parameters.${field}"`),
        );
      }
    } else if (head === 'instance') {
      if (field !== undefined && !INSTANCE_FIELDS.has(field)) {
        this.problems.push(
          problem(
            path,
            `unknown field "instance.${field}" (instance has ${[...INSTANCE_FIELDS].join(', ')})`,
          ),
        );
      }
    } else if (head === 'template') {
      if (field !== undefined && !TEMPLATE_FIELDS.has(field)) {
        this.problems.push(
          problem(
            path,
            `unknown field "template.${field}" (template has ${[...TEMPLATE_FIELDS].join(', ')})`,
          ),
        );
      }
    } else {
      this.problems.push(
        problem(
          path,
          `unknown reference "${path.original}" (the context has parameters, instance, template)`,
        ),
      );
    }
  }
}

/** The first `observed` call inside an expression (itself or a nested subexpression). */
function observedIn(node: Expression): Node | undefined {
  if (node.type !== 'SubExpression') return undefined;
  const sub = node as hbs.AST.SubExpression;
  if (pathName(sub.path) === OBSERVED_HELPER) return sub;
  for (const p of [...sub.params, ...(sub.hash?.pairs.map((pair) => pair.value) ?? [])]) {
    const found = observedIn(p);
    if (found) return found;
  }
  return undefined;
}

function pathName(node: Expression): string | undefined {
  return node.type === 'PathExpression' ? (node as PathExpression).original : undefined;
}

/** Turns a Handlebars parse error into a problem with line and column. */
export function parseErrorProblem(err: unknown): Problem {
  const e = err as {
    message?: string;
    hash?: { loc?: { first_line: number; first_column: number } };
  };
  const firstLine = (e.message ?? String(err)).split('\n');
  const loc = e.hash?.loc;
  const where = loc ? `line ${loc.first_line}, column ${loc.first_column + 1}: ` : '';
  const expecting = firstLine.find((l) => l.startsWith('Expecting')) ?? '';
  const head = (firstLine[0] ?? '').replace(/ on line \d+:$/, '');
  // Block mismatches come from the AST builder with "a doesn't match b - L:C".
  const mismatch = /^(.*) - (\d+):(\d+)$/.exec(head);
  if (mismatch) {
    return problem(
      undefined,
      `line ${mismatch[2]}, column ${Number(mismatch[3]) + 1}: ${mismatch[1]}`,
    );
  }
  return problem(
    undefined,
    `${where}${head}${expecting ? ` (${expecting.replace(/, got/, '; got')})` : ''}`,
  );
}
