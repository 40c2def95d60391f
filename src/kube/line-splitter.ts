// Splits a watch stream into its lines (one JSON event each) as the bytes arrive. readline did
// the same through a text decoder, an event emitter and string slicing per chunk; on an operator
// with a hundred watches that was several per cent of its CPU. Bytes are decoded only once a
// line is whole, so a multi-byte character torn across two chunks stays whole.
const NEWLINE = 0x0a;

export interface LineSplitter {
  /** Feeds the next chunk of the stream; calls the line callback for every line it completes. */
  push: (chunk: Buffer) => void;
  /** The stream ended: a last line without its newline is passed on too. */
  end: () => void;
}

export function splitLines(onLine: (line: string) => void): LineSplitter {
  /** Chunks of the line not yet complete (several when a big object spans many chunks). */
  let pending: Buffer[] = [];
  const emit = (bytes: Buffer): void => {
    // \r\n endings (a proxy may add them) and blank keep-alive lines carry no event.
    const end =
      bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length;
    if (end > 0) onLine(bytes.toString('utf8', 0, end));
  };
  return {
    push: (chunk) => {
      let start = 0;
      let newline = chunk.indexOf(NEWLINE, start);
      while (newline !== -1) {
        const piece = chunk.subarray(start, newline);
        if (pending.length > 0) {
          pending.push(piece);
          emit(Buffer.concat(pending));
          pending = [];
        } else emit(piece);
        start = newline + 1;
        newline = chunk.indexOf(NEWLINE, start);
      }
      if (start < chunk.length) pending.push(chunk.subarray(start));
    },
    end: () => {
      if (pending.length > 0) emit(Buffer.concat(pending));
      pending = [];
    },
  };
}
