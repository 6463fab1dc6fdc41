/**
 * Keys typed fast or pasted reach a text field as one chunk, an Enter among them (Ink then reports
 * no `return` key). The text before the first CR or LF is typed; `entered` says an Enter came with
 * it, and the field submits as a lone Enter would. What follows that Enter is dropped: the field
 * is closed by then. A CR never lands in the field.
 */
export function typedChunk(input: string): {readonly text: string; readonly entered: boolean} {
	const at = input.search(/[\r\n]/);
	return at < 0 ? {text: input, entered: false} : {text: input.slice(0, at), entered: true};
}
