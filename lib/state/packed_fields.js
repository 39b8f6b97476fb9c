'use strict';

// How SocketState keeps its facts small: properties on its prototype over
// two fields of every state, `flags` (a small integer: yes/no facts as bits,
// facts of a few values as a few bits each, and whether each rare fact is
// set) and `numbers` (an array of unboxed doubles), and a WeakMap per rare
// fact. Each fact reads and writes as a property of its own.

/**
 * Defines on `Class.prototype` each of `flags` (names: booleans), `packed`
 * ({ name: values }), `rare` ({ name: default }) and `numbers` (names: the
 * indexes of `numbers`).
 */
function defineFields(Class, flags, packed, rare, numbers) {
  const proto = Class.prototype;
  const define = (name, get, set) => Object.defineProperty(proto, name, { get, set, configurable: true });
  flags.forEach((name, i) => {
    const bit = 1 << i;
    define(name, function get() { return (this.flags & bit) !== 0; },
      function set(value) { this.flags = value ? this.flags | bit : this.flags & ~bit; });
  });
  let shift = flags.length;
  for (const [name, values] of Object.entries(packed)) {
    const at = shift;
    const width = Math.ceil(Math.log2(values.length));
    const mask = (1 << width) - 1;
    define(name, function get() { return values[(this.flags >>> at) & mask]; }, function set(value) {
      const index = values.indexOf(value);
      if (index === -1) throw new TypeError(`${Class.name}.${name}: not one of its values: ${value}`);
      this.flags = (this.flags & ~(mask << at)) | (index << at);
    });
    shift += width;
  }
  for (const [name, fallback] of Object.entries(rare)) {
    const values = new WeakMap();
    const bit = 1 << shift;
    shift += 1;
    // The default when not set: reading it costs no lookup.
    define(name, function get() { return (this.flags & bit) === 0 ? fallback : values.get(this); }, function set(value) {
      if (value === fallback) {
        if ((this.flags & bit) === 0) return;
        this.flags &= ~bit;
        values.delete(this);
      } else {
        this.flags |= bit;
        values.set(this, value);
      }
    });
  }
  // Every bit within a small integer, which V8 keeps unboxed in the field.
  if (shift > 30) throw new Error(`${Class.name} flags need ${shift} bits`);
  numbers.forEach((name, i) => {
    define(name, function get() { return this.numbers[i]; }, function set(value) { this.numbers[i] = value; });
  });
}

module.exports = { defineFields };
