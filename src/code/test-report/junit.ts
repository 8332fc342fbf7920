import { XMLParser } from 'fast-xml-parser';
import type { ParsedReport, ReportedTest, TestOutcome } from './types.js';

// JUnit XML as node:test's `junit` reporter and pytest's `--junitxml` write it (docs/coding-agents.md).

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  // Every element that may repeat is read as an array, so one test and many read the same way.
  isArray: (name) => name === 'testsuite' || name === 'testcase' || name === 'failure' || name === 'error' || name === 'skipped',
  processEntities: true,
  htmlEntities: false,
});

type Node = Record<string, unknown>;

/** How a JUnit test's id is spelled: node:test's suite path, or pytest's node id (`file::Class::name`). */
type JUnitFlavor = 'node-test' | 'pytest';

export function parseJUnit(text: string, flavor: JUnitFlavor): ParsedReport {
  if (text.trim() === '') return { ok: false, error: 'the JUnit report is empty' };
  let doc: Node;
  try {
    doc = parser.parse(text, true) as Node;
  } catch (e) {
    return { ok: false, error: `the JUnit report is not well-formed XML (${(e as Error).message.split('\n')[0]})` };
  }
  const roots = [doc.testsuites, ...asArray(doc.testsuite)].filter((n): n is Node => typeof n === 'object' && n !== null);
  if (roots.length === 0) return { ok: false, error: 'the JUnit report has no <testsuites> or <testsuite> element' };
  const tests: ReportedTest[] = [];
  const walk = (node: Node, suites: string[]) => {
    for (const c of asArray(node.testcase)) if (isNode(c)) tests.push(testOf(c, suites, flavor));
    for (const s of asArray(node.testsuite)) {
      if (!isNode(s)) continue;
      // pytest's single <testsuite name="pytest"> and node:test's file-less root are containers, not test names.
      const name = typeof s.name === 'string' && flavor === 'node-test' ? [s.name] : [];
      walk(s, [...suites, ...name]);
    }
  };
  for (const r of roots) walk(r, []);
  return { ok: true, tests };
}

function testOf(c: Node, suites: string[], flavor: JUnitFlavor): ReportedTest {
  const name = String(c.name ?? '');
  const classname = String(c.classname ?? '');
  const outcome = outcomeOf(c);
  if (flavor === 'node-test') return { id: [...suites, name].join(' > '), outcome };
  const file = typeof c.file === 'string' ? c.file : null;
  const aliases = [`${name} (${classname})`, classname ? `${classname}.${name}` : name];
  return { id: pytestNodeId(file, classname, name), outcome, aliases };
}

/** pytest's node id (`tests/test_x.py::TestY::test_z[1]`); without `file` (xunit2), from the dotted class name. */
function pytestNodeId(file: string | null, classname: string, name: string): string {
  if (!file) return classname ? `${classname}::${name}` : name;
  const module = file.replace(/\.py$/, '').split('/').join('.');
  const rest = classname === module ? '' : classname.startsWith(`${module}.`) ? classname.slice(module.length + 1) : '';
  return [file, ...(rest ? rest.split('.') : []), name].join('::');
}

function outcomeOf(c: Node): TestOutcome {
  if (asArray(c.failure).length > 0 || asArray(c.error).length > 0) return 'failed';
  const skipped = asArray(c.skipped)[0];
  if (skipped !== undefined) return isNode(skipped) && skipped.type === 'todo' ? 'todo' : 'skipped';
  return 'passed';
}

function asArray(v: unknown): unknown[] {
  return v === undefined || v === null ? [] : Array.isArray(v) ? v : [v];
}

function isNode(v: unknown): v is Node {
  return typeof v === 'object' && v !== null;
}
