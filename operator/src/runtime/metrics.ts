/**
 * The operator's Prometheus metrics: one family each, labelled by controller, made once per
 * registry however many controllers share it.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface ControllerMetrics {
  reconciles: Counter<'controller'>;
  errors: Counter<'controller'>;
  duration: Histogram<'controller'>;
  /** Calls to the apiserver by verb and answer (the HTTP status, or `error` when none came). */
  kubeRequests: Counter<'verb' | 'code'>;
  kubeLatency: Histogram<'verb'>;
  /** Reports the depth of a controller's queue, and the reconciles it runs, with every scrape. */
  watchQueue: (controller: string, queue: { depth: number; working: number }) => void;
}

const made = new WeakMap<Registry, ControllerMetrics>();

function make(registry: Registry): ControllerMetrics {
  const registers = [registry];
  const labelNames = ['controller'] as const;
  const queues = new Map<string, { depth: number; working: number }>();
  new Gauge({
    name: 'aiem_queue_depth',
    help: 'Keys waiting in a controller queue',
    labelNames,
    registers,
    collect() {
      for (const [controller, queue] of queues) this.set({ controller }, queue.depth);
    },
  });
  new Gauge({
    name: 'aiem_reconciles_in_flight',
    help: 'Reconciles a controller runs now',
    labelNames,
    registers,
    collect() {
      for (const [controller, queue] of queues) this.set({ controller }, queue.working);
    },
  });
  return {
    reconciles: new Counter({ name: 'aiem_reconcile_total', help: 'Reconciles run', labelNames, registers }),
    errors: new Counter({
      name: 'aiem_reconcile_errors_total',
      help: 'Reconciles that failed',
      labelNames,
      registers,
    }),
    duration: new Histogram({
      name: 'aiem_reconcile_duration_seconds',
      help: 'Reconcile latency',
      labelNames,
      registers,
    }),
    kubeRequests: new Counter({
      name: 'aiem_kube_requests_total',
      help: 'Calls to the Kubernetes API by verb and answer',
      labelNames: ['verb', 'code'] as const,
      registers,
    }),
    kubeLatency: new Histogram({
      name: 'aiem_kube_request_duration_seconds',
      help: 'Latency of calls to the Kubernetes API, including the wait for the client-side rate limit',
      labelNames: ['verb'] as const,
      registers,
    }),
    watchQueue: (controller, queue) => {
      queues.set(controller, queue);
    },
  };
}

export function controllerMetrics(registry: Registry): ControllerMetrics {
  const existing = made.get(registry);
  if (existing) return existing;
  const metrics = make(registry);
  made.set(registry, metrics);
  return metrics;
}
