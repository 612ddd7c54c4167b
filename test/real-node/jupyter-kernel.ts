/**
 * Jupyter's kernel messaging over a kernel's WebSocket (the `channels` endpoint, JSON frames), as
 * the real-node tests speak it to a real JupyterLab: the request that runs a cell, and what the
 * tests read of the kernel's answers.
 */

/** A message from the kernel, the parts the tests read. */
export interface KernelMessage {
  msg_type: string;
  parent_header: { msg_id?: string };
  content: { name?: string; text?: string; execution_state?: string };
}

/** The frame that asks the kernel to run `code` as a cell; its answers name `msgId` as their parent. */
export function executeRequest(msgId: string, code: string): string {
  return JSON.stringify({
    header: { msg_id: msgId, username: 'test', session: 'test', msg_type: 'execute_request', version: '5.3' },
    parent_header: {},
    metadata: {},
    content: { code, silent: false, store_history: false, user_expressions: {}, allow_stdin: false },
    channel: 'shell',
    buffers: [],
  });
}

/** A kernel's message of a WebSocket frame. */
export function kernelMessage(event: MessageEvent): KernelMessage {
  return JSON.parse(String(event.data)) as KernelMessage;
}
