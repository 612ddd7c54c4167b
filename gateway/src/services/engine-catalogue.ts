/**
 * What engines of one kind are made from: the profile an engine uses, checked usable by the
 * caller, and the version or image it runs; and the shaping of an engine by its profile (defaults
 * filled, bounds and every engine rule checked), a pure decision.
 */
import type { CallContext } from '../call/handler.ts';
import { ApiError, invalidArgument, invalidFields, type FieldViolation } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { applyConstraints } from '../engines/settings.ts';
import type { Store } from '../store/store-interface.ts';
import { annotationProblem, checkDisplayName } from '../validation/names.ts';
import { isAssigned } from '../validation/profile.ts';
import type { EngineApiRules, EngineMessage, EngineProfile, EngineVersion } from './engine-service.ts';
import { engineWorkspace } from './engine-permissions.ts';
import { messageOf } from './message-kinds.ts';
import { resolveReference } from './references.ts';

/** The profiles and versions (or images) of one engine kind. */
export class EngineCatalogue<E extends EngineMessage, P extends EngineProfile, V extends EngineVersion> {
  private readonly store: Store;
  private readonly rules: EngineApiRules<E, P, V>;

  constructor(store: Store, rules: EngineApiRules<E, P, V>) {
    this.store = store;
    this.rules = rules;
  }

  /** The profile an engine uses, checked usable by the caller. */
  async profile(engine: E, prefix: string, context: CallContext): Promise<P> {
    const found = await resolveReference(this.store, this.rules.profileKind, {
      name: engine.profile,
      field: `${prefix}.profile`,
      engineWorkspace: engineWorkspace(this.rules.kind, engine.name),
    });
    const profile = found.message;
    if (!profile.enabled) throw invalidArgument(`${prefix}.profile`, `"${profile.name}" is disabled`);
    if (!isAssigned(profile, context.caller.roles)) {
      throw new ApiError(
        Code.PERMISSION_DENIED,
        `The profile "${profile.name}" is not assigned to any of your roles`,
        {
          reason: 'PROFILE_NOT_ASSIGNED',
        },
      );
    }
    return profile;
  }

  /**
   * The version or image of `name` (which may be an alias), in the engine's workspace or global;
   * INVALID_ARGUMENT naming `field` when there is none.
   */
  async version(name: string, field: string, engineWorkspace: string): Promise<V> {
    return (await resolveReference(this.store, this.rules.versionKind, { name, field, engineWorkspace }))
      .message;
  }

  /** Every version or image of the kind, in every workspace. */
  async versions(): Promise<V[]> {
    const kind = this.rules.versionKind;
    return (await this.store.list(kind, '-')).map((v) => messageOf(kind, v).message);
  }
}

/**
 * Fills defaults from the profile and checks every engine rule of the kind; INVALID_ARGUMENT
 * with all violations.
 */
export function shapeEngine<E extends EngineMessage, P extends EngineProfile, V extends EngineVersion>(
  rules: EngineApiRules<E, P, V>,
  engine: E,
  profile: P,
  prefix: string,
): E {
  const constrained = applyConstraints(engine, profile, { prefix, fields: rules.settings });
  const violations = [...constrained.violations, ...commonViolations(engine, prefix)];
  let shaped = constrained.engine;
  if (rules.shape) {
    const result = rules.shape(shaped, profile, prefix);
    shaped = result.engine;
    violations.push(...result.violations);
  }
  if (violations.length > 0) throw invalidFields(violations);
  return shaped;
}

function commonViolations(engine: EngineMessage, prefix: string): FieldViolation[] {
  const violations: FieldViolation[] = [];
  const display = checkDisplayName(`${prefix}.display_name`, engine.displayName);
  if (display) violations.push(...display.violations);
  const annotation = annotationProblem(engine.annotations ?? {});
  if (annotation)
    violations.push({ field: `${prefix}.annotations["${annotation.key}"]`, description: annotation.problem });
  return violations;
}
