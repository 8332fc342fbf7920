import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { armJobOf } from '../../src/queue/arm-job.js';
import { parseQueueUrl, redactQueue } from '../../src/queue/connection.js';
import { jobIdOf, jobProblem, queueNameFor, queuesServedBy } from '../../src/queue/job.js';

describe('queue jobs and connections', () => {
  it('a queue URL: the password is kept for the connection and never in the display form', () => {
    const c = parseQueueUrl('redis://:s3cret-pw@10.0.0.5:6380/3', undefined, {});
    assert.deepEqual([c.host, c.port, c.db, c.password], ['10.0.0.5', 6380, 3, 's3cret-pw']);
    assert.equal(c.display, 'redis://10.0.0.5:6380/3');
    assert.equal(redactQueue('connect ECONNREFUSED redis://:s3cret-pw@10.0.0.5', c), 'connect ECONNREFUSED redis://:***@10.0.0.5');
    const fromEnv = parseQueueUrl('redis://127.0.0.1', 'env:QPW', { QPW: 'from-env' });
    assert.equal(fromEnv.password, 'from-env');
    assert.throws(() => parseQueueUrl('http://x', undefined, {}), /redis:\/\//);
    assert.throws(() => parseQueueUrl('redis://x/abc', undefined, {}), /database number/);
    assert.throws(() => parseQueueUrl('redis://x', 'env:NOPE', {}), /NOPE is not set/);
  });

  it('label routing: a job goes to the queue of its labels; a worker serves every subset of its own', () => {
    assert.equal(queueNameFor(undefined), 'joulebench-arms');
    assert.equal(queueNameFor({ site: 'a', gpu: 'h100' }), 'joulebench-arms.gpu=h100,site=a');
    const served = queuesServedBy({ gpu: 'h100', site: 'a' });
    assert.deepEqual(served.sort(), ['joulebench-arms', 'joulebench-arms.gpu=h100', 'joulebench-arms.gpu=h100,site=a', 'joulebench-arms.site=a'].sort());
    assert.ok(!queuesServedBy({ gpu: 'a100' }).includes(queueNameFor({ gpu: 'h100' })), 'an a100 worker never takes an h100 arm');
  });

  it('a local spec becomes a job with the suite inline and no local paths; malformed jobs are named', () => {
    const dir = mkdtempSync(join(tmpdir(), 'jb-job-'));
    try {
      const suite = join(dir, 'mine.jsonl');
      writeFileSync(suite, '{"id":"a","prompt":"p","expected":"e"}\n');
      const job = armJobOf('s1', 'arm-a', { suite, target: 'openai', endpoint: 'http://127.0.0.1:1/v1', model: 'm', credentialsRef: 'env:KEY', out: '/tmp/x.json', results: '/tmp/x.jsonl', history: false, meter_options: { powercap_root: '/here' } });
      assert.equal(jobProblem(job), null);
      assert.deepEqual(job.suite_file, { name: 'mine.jsonl', text: '{"id":"a","prompt":"p","expected":"e"}\n' });
      for (const k of ['out', 'results', 'history', 'meter_options']) assert.ok(!(k in job.spec), k);
      assert.equal(job.spec.credentialsRef, 'env:KEY');
      assert.equal(jobIdOf(job), 's1|arm-a|' + suite.replace(/[:\s]/g, '_'));
      assert.match(jobProblem({ ...job, format: 'other' }) ?? '', /^malformed job: format/);
      assert.match(jobProblem({ ...job, where: { gpu: 'h 100' } }) ?? '', /^malformed job: where/);
      assert.match(jobProblem({ ...job, spec: { ...job.spec, results: '/etc/passwd' } }) ?? '', /spec\.results is not allowed/);
      assert.match(jobProblem({ ...job, suite_file: { name: '../../etc/cron.d/x', text: '' } }) ?? '', /^malformed job: suite_file\.name/);
      assert.match(jobProblem({ ...job, suite_file: { name: '..', text: '' } }) ?? '', /^malformed job: suite_file\.name/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
