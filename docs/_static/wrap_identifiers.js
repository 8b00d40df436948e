// Long dotted identifiers (module titles, signatures) may wrap only after a "." or "_", never
// mid-word: insert <wbr> break opportunities there (they are not copied with the text) and
// custom.css turns off the theme's break-anywhere wrapping for these elements.
document.addEventListener("DOMContentLoaded", () => {
  const selector = "h1, h2, .sig-prename, .sig-name, .sig-param, code.xref, th code.literal";
  for (const element of document.querySelectorAll(selector)) {
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    const textNodes = [];
    while (walker.nextNode()) textNodes.push(walker.currentNode);
    for (const node of textNodes) {
      const parts = node.nodeValue.split(/(?<=[._])/);
      if (parts.length < 2) continue;
      const fragment = document.createDocumentFragment();
      parts.forEach((part, index) => {
        fragment.append(part);
        if (index < parts.length - 1) fragment.append(document.createElement("wbr"));
      });
      node.replaceWith(fragment);
    }
  }
});
