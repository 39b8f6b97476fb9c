'use strict';

// got's current major (14) needs Node 20 or later; got 13 (the devDependency
// alias got-13) is the newest that runs on Node 18. Both are ES modules only:
// import them, from a `before` hook in tests.
const GOT_14_NODE = 20;

/** Whether got 14 runs on this Node (its engines: node >= 20). */
function got14Runs(version = process.versions.node) {
  return Number(version.split('.')[0]) >= GOT_14_NODE;
}

/** got's newest major that runs on this Node: 14 from Node 20, else 13. */
async function importGot() {
  return got14Runs() ? (await import('got')).default : importGot13();
}

async function importGot13() {
  return (await import('got-13')).default;
}

module.exports = { importGot, importGot13, got14Runs };
