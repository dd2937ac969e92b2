// Condition types and reasons of the SampleDB and SampleDBBackup statuses: part of the API (users and tools match on
// them), so they are spelled once. Reasons are CamelCase and stable; the messages next to them may change.
import { REPLICATION_CONDITIONS, REPLICATION_EVENT_REASONS, REPLICATION_REASONS } from './replication.ts';

/** Condition types of `SampleDB.status.conditions`. */
export const SAMPLEDB_CONDITIONS = {
  ready: 'Ready',
  provisioned: 'Provisioned',
  initialized: 'Initialized',
  configured: 'Configured',
  storageResized: 'StorageResized',
  backupScheduled: 'BackupScheduled',
  deletionProtected: 'DeletionProtected',
  upgrading: 'Upgrading',
  credentialsApplied: 'CredentialsApplied',
  backupHealthy: 'BackupHealthy',
  ...REPLICATION_CONDITIONS,
} as const;
export type SampleDbConditionType = (typeof SAMPLEDB_CONDITIONS)[keyof typeof SAMPLEDB_CONDITIONS];

/** Condition types of `SampleDBBackup.status.conditions`. */
export const BACKUP_CONDITIONS = { completed: 'Completed', failed: 'Failed', verified: 'Verified' } as const;
/** Condition types of `SampleDBRestore.status.conditions`. */
export const RESTORE_CONDITIONS = { completed: 'Completed' } as const;
/** Condition types of `SampleDBDrill.status.conditions`. */
export const DRILL_CONDITIONS = { lastRunSucceeded: 'LastRunSucceeded' } as const;

/**
 * Reasons of a drill run (`status.runs[].reason` and the LastRunSucceeded condition). A refusal names the guard rail
 * that stopped it; nothing was injected then.
 */
export const DRILL_REASONS = {
  running: 'Running',
  scheduled: 'Scheduled',
  recovered: 'Recovered',
  notRecovered: 'NotRecovered',
  probeFailed: 'ProbeFailed',
  canaryLost: 'CanaryLost',
  replicationBehind: 'ReplicationBehind',
  canaryFailed: 'CanaryFailed',
  restoreChecked: 'RestoreChecked',
  restoreCheckFailed: 'RestoreCheckFailed',
  // Guard rails
  namespaceNotAllowed: 'NamespaceNotAllowed',
  sampleDbNotFound: 'SampleDBNotFound',
  sampleDbNotReady: 'SampleDBNotReady',
  backupInProgress: 'BackupInProgress',
  upgradeInProgress: 'UpgradeInProgress',
  restoreInProgress: 'RestoreInProgress',
  drillInProgress: 'DrillInProgress',
  wouldLeaveNoHealthyInstance: 'WouldLeaveNoHealthyInstance',
  leaderElectionDisabled: 'LeaderElectionDisabled',
  noCompletedBackup: 'NoCompletedBackup',
  /**
   * isolate-primary: a pod under a deny-all egress NetworkPolicy still reached the primary (or the check could not
   * run): the network does not enforce NetworkPolicy, so nothing is injected. The API cannot tell: the apiserver
   * stores a NetworkPolicy whether or not anything enforces it.
   */
  networkPolicyNotEnforced: 'NetworkPolicyNotEnforced',
  /** isolate-primary: the probe wrote through the client Service while the primary was isolated. */
  isolationNotEffective: 'IsolationNotEffective',
  /** fill-disk: the data volume's file system is larger than its claim allows (shared with the node), refused. */
  fillDiskUnsafe: 'FillDiskUnsafe',
  /** fill-disk: the Job that fills the volume failed (its ballast was then removed by the release Job). */
  fillFailed: 'FillFailed',
} as const;

export type BackupConditionType = (typeof BACKUP_CONDITIONS)[keyof typeof BACKUP_CONDITIONS];

/**
 * Reasons, grouped by the condition that uses them. Ready repeats the reason of the first condition that is not
 * True, and a pod waiting for an image or crashing passes the kubelet's own reason through (ErrImagePull, ...).
 */
export const REASONS = {
  // Ready
  ready: 'Ready',
  deleting: 'Deleting',
  rollingOut: 'RollingOut',
  invalidSpec: 'InvalidSpec',
  childRejected: 'ChildRejected',
  // Provisioned and Initialized: inputs the user provides
  credentialsPending: 'CredentialsPending',
  credentialsSecretNotFound: 'CredentialsSecretNotFound',
  credentialsSecretInvalid: 'CredentialsSecretInvalid',
  initSqlNotFound: 'InitSQLNotFound',
  initSqlKeyNotFound: 'InitSQLKeyNotFound',
  // Provisioned
  statefulSetPending: 'StatefulSetPending',
  databaseReady: 'DatabaseReady',
  volumePending: 'VolumePending',
  podPending: 'PodPending',
  unschedulable: 'Unschedulable',
  podNotReady: 'PodNotReady',
  /** The pod is Ready, but the client Service's EndpointSlice does not list it yet: clients would be refused. */
  serviceNotRouting: 'ServiceNotRouting',
  // Initialized
  initJobPending: 'InitJobPending',
  initJobSucceeded: 'InitJobSucceeded',
  initJobFailed: 'InitJobFailed',
  initializing: 'Initializing',
  backupNotFound: 'BackupNotFound',
  backupNotCompleted: 'BackupNotCompleted',
  backupFailed: 'BackupFailed',
  backupLocationInvalid: 'BackupLocationInvalid',
  // Configured
  parametersApplied: 'ParametersApplied',
  parametersRejected: 'ParametersRejected',
  // StorageResized
  sizeMatches: 'SizeMatches',
  expanding: 'Expanding',
  expansionNotSupported: 'ExpansionNotSupported',
  // BackupScheduled
  scheduled: 'Scheduled',
  noSchedule: 'NoSchedule',
  suspended: 'Suspended',
  invalidSchedule: 'InvalidSchedule',
  // DeletionProtected
  protected: 'Protected',
  finalBackupRunning: 'FinalBackupRunning',
  finalBackupFailed: 'FinalBackupFailed',
  snapshotInProgress: 'SnapshotInProgress',
  snapshotFailed: 'SnapshotFailed',
  /** The protection could not be taken; the data volumes' PersistentVolumes were switched to Retain instead. */
  dataRetained: 'DataRetained',
  /** The data volumes get the data-protection finalizer before anything else happens. */
  holdingVolumes: 'HoldingVolumes',
  // BackupHealthy
  backupsHealthy: 'BackupsHealthy',
  latestBackupFailed: 'LatestBackupFailed',
  noRecentBackup: 'NoRecentBackup',
  // Upgrading (True while a version change runs; the message names the step)
  upToDate: 'UpToDate',
  rollingRestart: 'RollingRestart',
  verifyingVersion: 'VerifyingVersion',
  versionCheckFailed: 'VersionCheckFailed',
  majorUpgrade: 'MajorUpgrade',
  majorUpgradeFailed: 'MajorUpgradeFailed',
  downgradeRefused: 'DowngradeRefused',
  // CredentialsApplied
  passwordApplied: 'PasswordApplied',
  passwordChanging: 'PasswordChanging',
  passwordChangeFailed: 'PasswordChangeFailed',
  // SampleDBBackup Completed / Failed
  sampleDbNotFound: 'SampleDBNotFound',
  databaseNotReady: 'DatabaseNotReady',
  waitingForBackup: 'WaitingForBackup',
  growingBackupVolume: 'GrowingBackupVolume',
  backupVolumeFull: 'BackupVolumeFull',
  running: 'Running',
  backupCompleted: 'BackupCompleted',
  noResult: 'NoResult',
  // SampleDBBackup Verified
  verificationPending: 'VerificationPending',
  verifying: 'Verifying',
  verified: 'Verified',
  verificationFailed: 'VerificationFailed',
  ...REPLICATION_REASONS,
} as const;
export type Reason = (typeof REASONS)[keyof typeof REASONS];

/** Reasons of the Events the operator records. */
export const EVENT_REASONS = {
  /** A child of a SampleDB was created (its note names it). */
  created: 'Created',
  /** The SampleDB became Ready. */
  ready: 'Ready',
  /** The SampleDB became Failed; the note is the Ready condition's message (its reason is in the note's head). */
  failed: 'Failed',
  backupCompleted: 'BackupCompleted',
  backupFailed: 'BackupFailed',
  backupVerified: 'BackupVerified',
  backupVerificationFailed: 'BackupVerificationFailed',
  restoreStep: 'RestoreStep',
  restoreCompleted: 'RestoreCompleted',
  restoreFailed: 'RestoreFailed',
  restoreRolledBack: 'RestoreRolledBack',
  drillStarted: 'DrillStarted',
  drillFaultInjected: 'DrillFaultInjected',
  drillFaultDetected: 'DrillFaultDetected',
  /** isolate-primary: the isolation's NetworkPolicy was deleted. */
  drillFaultLifted: 'DrillFaultLifted',
  drillSucceeded: 'DrillSucceeded',
  drillFailed: 'DrillFailed',
  drillRefused: 'DrillRefused',
  backupPruned: 'BackupPruned',
  backupPruneFailed: 'BackupPruneFailed',
  /** BackupHealthy turned False: the latest scheduled backup failed, or none is recent (the note: reason: message). */
  backupsUnhealthy: 'BackupsUnhealthy',
  /** BackupHealthy is True again after being False. */
  backupsHealthyAgain: 'BackupsHealthyAgain',
  childRejected: 'ChildRejected',
  upgradeStep: 'UpgradeStep',
  upgradeCompleted: 'UpgradeCompleted',
  upgradeFailed: 'UpgradeFailed',
  upgradeRetried: 'UpgradeRetried',
  downgradeRefused: 'DowngradeRefused',
  finalBackupRetry: 'FinalBackupRetry',
  volumeRetained: 'VolumeRetained',
  ...REPLICATION_EVENT_REASONS,
} as const;
