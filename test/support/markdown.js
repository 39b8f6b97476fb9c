'use strict';

// What a Markdown reader follows in our documents: link and image targets, and
// the anchors GitHub gives headings. Fenced code is left out: a link-like
// string in a snippet is code, not a link.
const fs = require('node:fs');
const path = require('node:path');

function prose(text) {
  return text.replace(/^```[\s\S]*?^```/gm, '');
}

// GitHub's anchor for a heading: lower case, punctuation dropped (but not
// '-' or '_'), each space a '-'.
function slug(heading) {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N}_\- ]/gu, '').replace(/ /g, '-');
}

function anchors(text) {
  return new Set([...prose(text).matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1])));
}

// Every [text](target) and ![alt](target), with its target as written.
function targets(text) {
  return [...prose(text).matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)].map((m) => m[1]);
}

// Targets that point at a file or a heading which is not there: an anchor of
// the same document, or a path relative to `file` that must exist inside
// `root`. Absolute URLs are not followed.
function danglingLinks(file, root) {
  const text = fs.readFileSync(file, 'utf8');
  const own = anchors(text);
  const dangling = [];
  for (const target of targets(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    if (target.startsWith('#')) {
      if (!own.has(target.slice(1))) dangling.push(target);
      continue;
    }
    const [pathPart, anchor] = target.split('#');
    const resolved = path.resolve(path.dirname(file), decodeURI(pathPart));
    const inside = !path.relative(root, resolved).startsWith('..');
    if (!inside || !fs.existsSync(resolved)) {
      dangling.push(target);
      continue;
    }
    // An anchor into another Markdown document must be one of its headings.
    if (anchor !== undefined && resolved.endsWith('.md') && !anchors(fs.readFileSync(resolved, 'utf8')).has(anchor)) {
      dangling.push(target);
    }
  }
  return dangling;
}

module.exports = { danglingLinks, targets };
