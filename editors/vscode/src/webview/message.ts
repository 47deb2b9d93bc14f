// What the extension sends the dependency-graph webview (graph.ts there,
// ../graph.ts here); type only, shared by both sides.

export interface GraphMessage {
  type: 'graph';
  title: string;
  /** `done/total · state` of the epic or story. */
  summary: string;
  /** `saga-lsp plan --format mermaid`'s text ('' when there is none). */
  text: string;
  /** Mermaid node id (n1, …) → the item's id. */
  nodes: Record<string, string>;
  /** The state classes in use, with their colours. */
  legend: { state: string; fill: string; stroke: string }[];
  /** The critical path's colour ('' when nothing is on it). */
  critical: string;
  error?: string;
}
