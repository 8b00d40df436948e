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
        const pieces = token.split(/(?<=[._])/);
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
