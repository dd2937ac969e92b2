import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { nodeArguments } from '../../../src/envtest/arguments.ts';
import { repositoryOf } from '../../../src/envtest/real-node/containerd.ts';
import { type HostChanges, teardownScript } from '../../../src/envtest/real-node/host-journal.ts';
import { defaultStorageClass, hostPathRecords } from '../../../src/envtest/volume-binder.ts';

const changes = (extra: Partial<HostChanges> = {}): HostChanges => ({
  owner: { pid: 4242, startTime: '777' },
  workDir: '/tmp/envtest-node-abc',
  lockFile: '/run/sampledb-envtest/real-node.lock',
  sysctls: { 'net.ipv4.ip_forward': '0', 'vm.overcommit_memory': '0' },
  cgroupTrees: ['/sys/fs/cgroup/memory/x/sampledb-node'],
  cgroupParents: ['/sys/fs/cgroup/cpu/x'],
  createdPaths: ['/var/lib/kubelet'],
  netnsBefore: [],
  ...extra,
});

describe('the real node teardown script', () => {
  it('is valid POSIX sh that restores only what was recorded', () => {
    const before = teardownScript(changes());
    assert.equal(spawnSync('sh', ['-n'], { input: before }).status, 0, 'sh -n');
    assert.doesNotMatch(before, /ip link del/, 'no bridge recorded, none deleted');
    assert.doesNotMatch(before, /iptables-restore/, 'no rules saved, none restored');
    assert.match(before, /echo '0' > '\/proc\/sys\/net\/ipv4\/ip_forward'/);
    assert.match(before, /rm -rf --one-file-system '\/var\/lib\/kubelet'/);
    assert.match(before, /rmdir '\/sys\/fs\/cgroup\/cpu\/x'/);

    const after = teardownScript(changes({ bridge: 'sdbnode0', iptables: { v4: '/run/x.v4' } }));
    assert.equal(spawnSync('sh', ['-n'], { input: after }).status, 0, 'sh -n');
    assert.match(after, /ip link del 'sdbnode0'/);
    assert.match(after, /restore_tables iptables '\/run\/x.v4'/);
  });

  it('releases the lock only while it still names this node', () => {
    const script = teardownScript(changes());
    assert.match(script, /grep -q '"pid":4242,"startTime":"777"' '\/run\/sampledb-envtest\/real-node.lock'/);
    // The lock file as acquireNodeLock writes it.
    assert.ok(
      JSON.stringify({ pid: 4242, startTime: '777', command: 'x' }).includes('"pid":4242,"startTime":"777"'),
    );
  });

  it('never removes through a mount: mounts first, and rm stays on one file system', () => {
    const script = teardownScript(changes());
    assert.ok(script.indexOf('umount -l') < script.indexOf('rm -rf --one-file-system "$WORK"'));
    assert.doesNotMatch(script.replaceAll('rm -rf --one-file-system', ''), /rm -rf/);
  });
});

describe('--node and --wait-for-node', () => {
  it('default to kwok and no wait; refuse anything else', () => {
    assert.deepEqual(nodeArguments([]), { node: 'kwok', lockWaitMs: 0 });
    assert.deepEqual(nodeArguments(['--node', 'real', '--wait-for-node=90']), {
      node: 'real',
      lockWaitMs: 90_000,
    });
    assert.throws(() => nodeArguments(['--node', 'docker']), /"kwok" or "real"/);
    assert.throws(() => nodeArguments(['--node']), /needs a value/);
    assert.throws(() => nodeArguments(['--wait-for-node', '-1']), /number of seconds/);
  });
});

describe('image references and storage classes', () => {
  it('repositoryOf keeps a registry port and drops tag or digest', () => {
    assert.equal(repositoryOf('localhost/postgres:15'), 'localhost/postgres');
    assert.equal(repositoryOf('localhost:5000/postgres'), 'localhost:5000/postgres');
    assert.equal(repositoryOf('localhost:5000/postgres:17.6'), 'localhost:5000/postgres');
    assert.equal(repositoryOf(`localhost/op@sha256:${'a'.repeat(64)}`), 'localhost/op');
  });

  it('the default StorageClass follows its backend: kwok binds at once, local volumes wait for the pod', () => {
    assert.equal(defaultStorageClass().volumeBindingMode, 'Immediate');
    assert.equal(defaultStorageClass(hostPathRecords).provisioner, 'envtest.local/hostpath');
    const local = defaultStorageClass({
      ...hostPathRecords,
      provisioner: 'x/local',
      bindingMode: 'WaitForFirstConsumer',
    });
    assert.deepEqual(
      [local.provisioner, local.volumeBindingMode, local.allowVolumeExpansion],
      ['x/local', 'WaitForFirstConsumer', true],
    );
  });
});
