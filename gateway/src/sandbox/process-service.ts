/**
 * ProcessService: processes in a sandbox engine, created PENDING (so that a caller can follow
 * the output before anything runs) or started at once, then RUNNING until they end SUCCEEDED
 * (exit 0) or FAILED (another exit code, or a signal). Calls that act (create, start, signal)
 * need a running engine; reads work as long as the engine exists.
 */
import { randomBytes } from 'node:crypto';
import { ServerStream, type CallContext, type Handlers } from '../call/handler.ts';
import { serviceHandlers } from '../call/service-impl.ts';
import { ApiError, invalidArgument, invalidFields, type FieldViolation } from '../errors/api-error.ts';
import { Code } from '../errors/code.ts';
import { Process_State, type Process } from '../gen/ai/h2o/engine/v1/process.pb.ts';
import {
  ProcessServiceService,
  type CreateProcessRequest,
  type ListProcessesRequest,
  type ListProcessesResponse,
  type SendSignalRequest,
  type StreamOutputResponse,
} from '../gen/ai/h2o/engine/v1/process_service.pb.ts';
import { page } from '../list/pagination.ts';
import type { SandboxEngines } from '../services/sandbox-engine-service.ts';
import type { ClusterPlacement, Store } from '../store/store-interface.ts';
import { resourceIdProblem } from '../validation/names.ts';
import { asFrames, selected, type Chunk } from './output-log.ts';
import type { PodExec } from './pod-exec.ts';
import { ProcessRunner } from './process-runner.ts';
import { ProcessSweeper } from './process-sweeper.ts';
import { recountRunning } from './running-count.ts';
import { parseProcessName, ProcessStore, type StoredProcess } from './process-store.ts';
import { sandboxPath } from './sandbox-path.ts';
import { idOf, workspaceOf } from '../../../shared/resource-name.ts';

const ACTION = 'RUN_PROCESSES';
/** How often a replica that does not run a process looks at its stored state. */
const POLL_MS = 500;
/** Names Kubernetes (and shells) accept for environment variables. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const TERMINAL: readonly Process_State[] = [Process_State.STATE_SUCCEEDED, Process_State.STATE_FAILED];
const FILTER = /^\s*state\s*=\s*"?(STATE_[A-Z]+)"?\s*$/;

export interface ProcessServiceDeps {
  sandboxes: SandboxEngines;
  exec: PodExec;
  store: Store & ClusterPlacement;
  now?: () => Date;
  /** How often to settle processes whose runner stopped (see process-sweeper.ts); never when unset. */
  sweepEveryMs?: number;
}

const isTerminal = (process: Process): boolean => TERMINAL.includes(process.state);

function stateName(state: Process_State): string {
  return Object.entries(Process_State).find(([, v]) => v === state)?.[0] ?? 'STATE_UNSPECIFIED';
}

/** Every problem of a process to create, named below `process` (AIP-193). */
export function processViolations(process: Process): FieldViolation[] {
  const violations: FieldViolation[] = [];
  if (process.command.trim() === '')
    violations.push({ field: 'process.command', description: 'is required' });
  if (process.command.includes('\0') || process.args.some((a) => a.includes('\0')))
    violations.push({ field: 'process.args', description: 'must not contain NUL characters' });
  for (const [name, value] of Object.entries(process.environmentVariables)) {
    if (!ENV_NAME.test(name) || value.includes('\0'))
      violations.push({
        field: `process.environment_variables["${name}"]`,
        description:
          'must be a name of letters, digits and "_", not starting with a digit, and a value without NUL',
      });
  }
  return violations;
}

function engineOf(processName: string): string {
  return processName.slice(0, processName.lastIndexOf('/processes/'));
}

function checkedName(name: string, field = 'name'): string {
  const parts = parseProcessName(name);
  if (parts === undefined || resourceIdProblem(parts.id) !== undefined)
    throw invalidArgument(
      field,
      `"${name}" is not a process name such as "workspaces/w/sandboxEngines/e/processes/p"`,
    );
  return name;
}

/** The process ids the service picks when the caller leaves the id empty. */
function generatedId(): string {
  return `p-${randomBytes(6).toString('hex')}`;
}

class Processes {
  readonly runner: ProcessRunner;
  readonly store: ProcessStore;
  private readonly deps: ProcessServiceDeps;

  constructor(deps: ProcessServiceDeps) {
    this.deps = deps;
    this.store = new ProcessStore(deps.store.kubeConfig, deps.store.namespace);
    this.runner = new ProcessRunner({
      exec: deps.exec,
      store: this.store,
      onChange: (name) => this.recount(name),
    });
  }

  now(): Date {
    return this.deps.now?.() ?? new Date();
  }

  engine(name: string, context: CallContext, running: boolean): ReturnType<SandboxEngines['inEngine']> {
    return this.deps.sandboxes.inEngine(name, context, { action: ACTION, running });
  }

  /** A process of an engine the caller may read. */
  async read(name: string, context: CallContext): Promise<StoredProcess> {
    await this.engine(engineOf(checkedName(name)), context, false);
    return this.store.get(name);
  }

  /**
   * Keeps the engine's count of running processes (and its last activity) current: a sandbox
   * with a running process is never idle, and its idle time counts from the last one's end.
   */
  private recount(processName: string): Promise<void> {
    return recountRunning({ processes: this.store, store: this.deps.store }, processName, this.now());
  }

  /** The process once it has ended: followed here if this replica runs it, else polled. */
  async ended(name: string, signal?: AbortSignal): Promise<Process> {
    while (signal?.aborted !== true) {
      if (await this.runner.ended(name)) return (await this.store.get(name)).process;
      const stored = await this.store.get(name);
      if (isTerminal(stored.process)) return stored.process;
      await pause(POLL_MS, signal);
    }
    throw new ApiError(Code.CANCELLED, 'The call was cancelled');
  }

  /** The output so far: live from this replica's log, else as stored with the ended process. */
  output(name: string, stored: StoredProcess): readonly Chunk[] {
    return this.runner.logOf(name)?.frames ?? stored.output.frames;
  }
}

function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

async function createProcess(
  processes: Processes,
  request: CreateProcessRequest,
  context: CallContext,
): Promise<Process> {
  const { parent, process: input } = request;
  const { engine, objectName, target } = await processes.engine(parent, context, true);
  if (input === undefined) throw invalidArgument('process', 'is required');
  const violations = processViolations(input);
  if (violations.length > 0) throw invalidFields(violations);
  const workingDirectory = sandboxPath('process.working_directory', input.workingDirectory || '/');
  if (Object.keys(input.secretEnvironmentVariables).length > 0)
    throw new ApiError(
      Code.FAILED_PRECONDITION,
      'H2O Secure Store is not configured in this installation: secret environment variables cannot be resolved',
      { reason: 'BACKEND_NOT_CONFIGURED' },
    );
  const id = request.processId || generatedId();
  const idProblem = resourceIdProblem(id);
  if (idProblem) throw invalidArgument('process_id', idProblem);
  const process: Process = {
    ...input,
    name: `${parent}/processes/${id}`,
    workingDirectory,
    secretEnvironmentVariables: {},
    state: Process_State.STATE_PENDING,
    exitCode: undefined,
    createTime: undefined,
    startTime: undefined,
    endTime: undefined,
  };
  const created = await processes.store.create(process, { objectName, uid: engine.uid });
  if (!request.autoRun) return created;
  return processes.runner.start(created, target, processes.now());
}

/** The state a list filter asks for (`state = STATE_RUNNING`), or none for an empty filter. */
export function stateFilter(filter: string): string | undefined {
  if (filter.trim() === '') return undefined;
  const wanted = FILTER.exec(filter)?.[1];
  if (wanted === undefined || !(wanted in Process_State) || wanted === 'STATE_UNSPECIFIED')
    throw invalidArgument('filter', `"${filter}" is not a filter such as "state = STATE_RUNNING"`);
  return wanted;
}

async function listProcesses(
  processes: Processes,
  request: ListProcessesRequest,
  context: CallContext,
): Promise<ListProcessesResponse> {
  const { parent, filter } = request;
  await processes.engine(parent, context, false);
  const wanted = stateFilter(filter);
  const all = await processes.store.list(workspaceOf(parent), idOf(parent));
  const matching = wanted === undefined ? all : all.filter((p) => stateName(p.state) === wanted);
  const { items, nextPageToken } = page(matching, request, `parent=${parent}&filter=${filter}`);
  return { processes: items, nextPageToken };
}

async function startProcess(
  processes: Processes,
  request: { name: string },
  context: CallContext,
): Promise<Process> {
  const name = checkedName(request.name);
  const { target } = await processes.engine(engineOf(name), context, true);
  const { process } = await processes.store.get(name);
  if (process.state !== Process_State.STATE_PENDING)
    throw new ApiError(
      Code.FAILED_PRECONDITION,
      `The process "${name}" has already been started (it is ${stateName(process.state)})`,
      { reason: 'ALREADY_STARTED' },
    );
  return processes.runner.start(process, target, processes.now());
}

async function sendSignal(
  processes: Processes,
  request: SendSignalRequest,
  context: CallContext,
): Promise<Process> {
  const name = checkedName(request.name);
  const { signal } = request;
  if (!Number.isInteger(signal) || signal < 1 || signal > 64)
    throw invalidArgument('signal', `must be a signal number from 1 to 64, got ${signal}`);
  const { target } = await processes.engine(engineOf(name), context, true);
  const { process } = await processes.store.get(name);
  if (process.state !== Process_State.STATE_RUNNING)
    throw new ApiError(
      Code.FAILED_PRECONDITION,
      `The process "${name}" is not running (it is ${stateName(process.state)}); only running processes take signals`,
      { reason: 'NOT_RUNNING' },
    );
  if (!(await processes.runner.signal(name, signal, target)))
    throw new ApiError(Code.FAILED_PRECONDITION, `The process "${name}" has ended`, {
      reason: 'NOT_RUNNING',
    });
  return (await processes.store.get(name)).process;
}

/** Output as StreamOutput sends it: what there is (unless skipped), then what comes, until the end. */
async function* streamed(
  processes: Processes,
  name: string,
  { skipReplay, signal }: { skipReplay: boolean; signal?: AbortSignal },
): AsyncGenerator<StreamOutputResponse> {
  // A process that has not started yet, or runs elsewhere, is waited for here.
  for (;;) {
    const live = processes.runner.logOf(name);
    if (live !== undefined) {
      for await (const chunk of live.follow(skipReplay, signal))
        yield { stream: chunk.stream, data: chunk.data };
      return;
    }
    const stored = await processes.store.get(name);
    if (isTerminal(stored.process)) {
      const replayed = skipReplay ? [] : stored.output.frames;
      for (const chunk of replayed) yield { stream: chunk.stream, data: chunk.data };
      return;
    }
    if (signal?.aborted === true) return;
    await processes.runner.startedOrAfter(name, POLL_MS, signal);
  }
}

/** The RPCs of ProcessService. */
export function processService(deps: ProcessServiceDeps): Handlers {
  const processes = new Processes(deps);
  if (deps.sweepEveryMs !== undefined) {
    const sweeper = new ProcessSweeper({
      processes: processes.store,
      store: deps.store,
      exec: deps.exec,
      follows: (name) => processes.runner.follows(name),
    });
    sweeper.start(deps.sweepEveryMs);
  }
  return serviceHandlers(ProcessServiceService, {
    createProcess: async (request, context) => ({
      process: await createProcess(processes, request, context),
    }),
    getProcess: async (request, context) => ({
      process: (await processes.read(request.name, context)).process,
    }),
    listProcesses: (request, context) => listProcesses(processes, request, context),
    startProcess: async (request, context) => ({ process: await startProcess(processes, request, context) }),
    sendSignal: async (request, context) => ({ process: await sendSignal(processes, request, context) }),
    waitProcess: async (request, context) => {
      const { name } = request;
      await processes.read(name, context);
      return { process: await processes.ended(name, context.signal) };
    },
    readOutput: async (request, context) => {
      const { name } = request;
      const stored = await processes.read(name, context);
      return { data: selected(processes.output(name, stored), request.outputStream) };
    },
    readOutputFrames: async (request, context) => {
      const { name } = request;
      const stored = await processes.read(name, context);
      return { frames: asFrames(processes.output(name, stored)) };
    },
    streamOutput: async (request, context) => {
      const { name, skipReplay } = request;
      await processes.read(name, context);
      return new ServerStream(
        streamed(processes, name, { skipReplay, ...(context.signal ? { signal: context.signal } : {}) }),
      );
    },
  });
}
