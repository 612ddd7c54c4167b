/**
 * The authorizer that applies a policy file, reloaded when the file changes. The file is read
 * again every interval (it is small), which also sees a Kubernetes ConfigMap volume swap its
 * contents.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ApiError } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { log } from '../log.ts';
import { ADMINISTER, ALL_WORKSPACES, type Authorizer, type Caller } from './authorizer.ts';
import { allows, parsePolicy, type Policy } from './policy.ts';

/** The policy applied when no policy file is configured. */
export const DEFAULT_POLICY_FILE = fileURLToPath(new URL('default-policy.yaml', import.meta.url));

/** An {@link Authorizer} over the current policy. */
export class PolicyAuthorizer implements Authorizer {
  private current: Policy;

  constructor(policy: Policy) {
    this.current = policy;
  }

  /** Applies `policy` to every later call. */
  replace(policy: Policy): void {
    this.current = policy;
  }

  check(caller: Caller, permission: string, workspace: string): Promise<void> {
    if (allows(this.current, caller, permission, workspace)) return Promise.resolve();
    log.info({ subject: caller.subject, permission, workspace }, 'Denied permission');
    const where = workspace === ALL_WORKSPACES ? 'all workspaces' : `"workspaces/${workspace}"`;
    return Promise.reject(
      new ApiError(Code.PERMISSION_DENIED, `The permission "${permission}" on ${where} is required`, {
        reason: 'PERMISSION_DENIED',
      }),
    );
  }

  isAdministrator(caller: Caller, workspace: string): Promise<boolean> {
    return Promise.resolve(allows(this.current, caller, ADMINISTER, workspace));
  }
}

/** A policy file being applied; `close()` stops watching it. */
export interface PolicyFile {
  authorizer: PolicyAuthorizer;
  close(): void;
}

/** The file's text, or the error reading it. */
function read(path: string): { text: string } | { error: unknown } {
  try {
    return { text: readFileSync(path, 'utf8') };
  } catch (error: unknown) {
    return { error };
  }
}

/**
 * Applies the policy in `path` and reloads it whenever the file's content changes. A file that
 * cannot be read or parsed at start is an error; on a reload, the last good policy stays and the
 * problem is logged.
 *
 * @throws PolicyError or a file system error when the file cannot be used at start
 */
export function watchPolicyFile(
  path: string,
  options: {
    intervalMs?: number;
    /** Called after each reload, with the reason when the changed file was rejected. */
    onReload?: (error?: unknown) => void;
  } = {},
): PolicyFile {
  let seen = readFileSync(path, 'utf8');
  const authorizer = new PolicyAuthorizer(parsePolicy(seen, path));
  log.info({ path }, 'Loaded policy');
  // The content is compared, not file times: writes within one clock tick, renames and symlink
  // swaps all show, and a file read half-written is read again once complete.
  const poll = (): void => {
    const current = read(path);
    // A file that cannot be read is a state of its own, reported once until it changes.
    const state = 'text' in current ? current.text : `\0${String(current.error)}`;
    if (state === seen) return;
    seen = state;
    try {
      if ('error' in current) throw current.error;
      authorizer.replace(parsePolicy(current.text, path));
      log.info({ path }, 'Reloaded policy');
      options.onReload?.();
    } catch (error: unknown) {
      log.error({ path, err: error }, 'Rejected changed policy; kept the previous one');
      options.onReload?.(error);
    }
  };
  const timer = setInterval(poll, options.intervalMs ?? 2000);
  timer.unref();
  return {
    authorizer,
    close: () => {
      clearInterval(timer);
    },
  };
}
