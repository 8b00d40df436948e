// Long identifiers (module titles, signatures, code such as flags) may wrap only after a "."
// or "_" or at a space, never mid-word nor after the "--" of a flag: each piece is kept on one
// line and <wbr> break opportunities (not copied with the text) go between the pieces.
// custom.css turns off the theme's break-anywhere wrapping for these elements.
document.addEventListener("DOMContentLoaded", () => {
  const selector = "h1, h2, .sig-prename, .sig-name, .sig-param, code.literal";
  for (const element of document.querySelectorAll(selector)) {
    if (element.closest("pre")) continue;  // code blocks keep their own layout
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    const textNodes = [];
    while (walker.nextNode()) textNodes.push(walker.currentNode);
    for (const node of textNodes) {
      // Headings in words are prose: only single-token headings (module names) are split.
      if (element.matches("h1, h2") && /\s/.test(node.nodeValue.trim())) continue;
      if (!/[._-]/.test(node.nodeValue)) continue;
      const fragment = document.createDocumentFragment();
      for (const token of node.nodeValue.split(/(\s+)/)) {
        if (!token || /^\s+$/.test(token)) {
          fragment.append(token);
          continue;
        }
        const pieces = token.split(/(?<=\w[._])/);  // not after a leading "."
        // A short last piece (a file extension, "py") stays with the piece before it.
        if (pieces.length > 1 && pieces[pieces.length - 1].length <= 3) {
          const last = pieces.pop();
          pieces[pieces.length - 1] += last;
        }
        pieces.forEach((piece, index) => {
          const span = document.createElement("span");
          span.style.whiteSpace = "nowrap";
          span.textContent = piece;
          fragment.append(span);
          if (index < pieces.length - 1) fragment.append(document.createElement("wbr"));
        });
      }
      node.replaceWith(fragment);
    }
  }
});

// Result tables (converted from benchmarks/results/*.md): a value "182.8 +- 18.3" and a name such
// as Step_1-AverageReturn or E-MAML-TRPO stay on one line (browsers break after hyphens): rows
// stay one line high, and a table wider than the page scrolls.
document.addEventListener("DOMContentLoaded", () => {
  const unbreakable = /\S+ \+- \S+|[\w.]*[A-Za-z0-9][_-][\w.-]*[A-Za-z0-9]/g;
  for (const cell of document.querySelectorAll("table.results-table td, table.results-table th")) {
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    const textNodes = [];
    while (walker.nextNode()) {
      if (!walker.currentNode.parentElement.closest("code")) textNodes.push(walker.currentNode);
    }
    for (const node of textNodes) {
      const text = node.nodeValue;
      if (!text.match(unbreakable)) continue;
      const fragment = document.createDocumentFragment();
      let position = 0;
      for (const match of text.matchAll(unbreakable)) {
        fragment.append(text.slice(position, match.index));
        const span = document.createElement("span");
        span.style.whiteSpace = "nowrap";
        span.textContent = match[0];
        fragment.append(span);
        position = match.index + match[0].length;
      }
      fragment.append(text.slice(position));
      node.replaceWith(fragment);
    }
  }
});
