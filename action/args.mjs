// The `args` input split as a shell would split a plain line of words: whitespace separates,
// '…' keeps everything, "…" keeps everything but \" and \\, a backslash outside quotes keeps the
// next character. Nothing is expanded ($VAR, globs): the arguments go to loopx as written.

/** The words of `text`; throws on an unclosed quote. */
export function splitArgs(text) {
  const words = [];
  /** @type {string | null} */
  let word = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (/\s/.test(c)) {
      if (word !== null) words.push(word);
      word = null;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end === -1) throw new Error("a ' quote is not closed");
      word = (word ?? "") + text.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      let part = "";
      while (j < text.length && text[j] !== '"') {
        if (text[j] === "\\" && (text[j + 1] === '"' || text[j + 1] === "\\")) j++;
        part += text[j++];
      }
      if (j >= text.length) throw new Error('a " quote is not closed');
      word = (word ?? "") + part;
      i = j;
    } else if (c === "\\" && i + 1 < text.length) {
      word = (word ?? "") + text[++i];
    } else {
      word = (word ?? "") + c;
    }
  }
  if (word !== null) words.push(word);
  return words;
}
