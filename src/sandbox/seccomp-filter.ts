// The namespace tier's seccomp filter: a classic BPF program, in the binary form the kernel takes
// (and bwrap's --seccomp reads from a descriptor), that refuses with EPERM the system calls bwrap's
// namespaces and dropped capabilities leave reachable and a sandboxed program has no business
// making: the kernel keyring (shared across the host, not namespaced), io_uring, BPF, perf events,
// userfaultfd, handle-based opens, mounting, module and kexec loading, clock and swap changes, and
// looking at or into other processes. Any other architecture's calls (a 32-bit program on a 64-bit
// host would reach other numbers) end the process; x32 calls are refused. Written out here rather
// than with libseccomp because Keel loads no native addon: the program is a few dozen fixed
// instructions. The numbers are the kernel's (asm/unistd_64.h; asm-generic/unistd.h for arm64).

interface ArchTable {
  /** AUDIT_ARCH_* of the architecture (seccomp_data.arch). */
  audit: number;
  /** System call numbers by name; absent names do not exist on the architecture. */
  calls: Record<string, number>;
  /** x86_64 only: numbers with this bit are the x32 ABI, refused whole. */
  x32Bit?: number;
}

/** The calls refused, by name (the reason for each family is in the header). */
export const DENIED_SYSCALLS = [
  'keyctl',
  'add_key',
  'request_key',
  'io_uring_setup',
  'io_uring_enter',
  'io_uring_register',
  'bpf',
  'perf_event_open',
  'userfaultfd',
  'open_by_handle_at',
  'name_to_handle_at',
  'mount',
  'umount2',
  'pivot_root',
  'fsopen',
  'fsconfig',
  'fsmount',
  'fspick',
  'move_mount',
  'open_tree',
  'mount_setattr',
  'unshare',
  'setns',
  'init_module',
  'finit_module',
  'delete_module',
  'kexec_load',
  'kexec_file_load',
  'reboot',
  'swapon',
  'swapoff',
  'acct',
  'quotactl',
  'quotactl_fd',
  'lookup_dcookie',
  'settimeofday',
  'clock_settime',
  'clock_adjtime',
  'adjtimex',
  'syslog',
  'vhangup',
  'iopl',
  'ioperm',
  'ptrace',
  'process_vm_readv',
  'process_vm_writev',
  'kcmp',
  'fanotify_init',
  'nfsservctl',
  'uselib',
  '_sysctl',
  'sysfs',
  'ustat',
  'create_module',
  'get_kernel_syms',
  'query_module',
] as const;

const X86_64: ArchTable = {
  audit: 0xc000_003e,
  x32Bit: 0x4000_0000,
  calls: {
    keyctl: 250,
    add_key: 248,
    request_key: 249,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    bpf: 321,
    perf_event_open: 298,
    userfaultfd: 323,
    open_by_handle_at: 304,
    name_to_handle_at: 303,
    mount: 165,
    umount2: 166,
    pivot_root: 155,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    move_mount: 429,
    open_tree: 428,
    mount_setattr: 442,
    unshare: 272,
    setns: 308,
    init_module: 175,
    finit_module: 313,
    delete_module: 176,
    kexec_load: 246,
    kexec_file_load: 320,
    reboot: 169,
    swapon: 167,
    swapoff: 168,
    acct: 163,
    quotactl: 179,
    quotactl_fd: 443,
    lookup_dcookie: 212,
    settimeofday: 164,
    clock_settime: 227,
    clock_adjtime: 305,
    adjtimex: 159,
    syslog: 103,
    vhangup: 153,
    iopl: 172,
    ioperm: 173,
    ptrace: 101,
    process_vm_readv: 310,
    process_vm_writev: 311,
    kcmp: 312,
    fanotify_init: 300,
    nfsservctl: 180,
    uselib: 134,
    _sysctl: 156,
    sysfs: 139,
    ustat: 136,
    create_module: 174,
    get_kernel_syms: 177,
    query_module: 178,
  },
};

const AARCH64: ArchTable = {
  audit: 0xc000_00b7,
  calls: {
    keyctl: 219,
    add_key: 217,
    request_key: 218,
    io_uring_setup: 425,
    io_uring_enter: 426,
    io_uring_register: 427,
    bpf: 280,
    perf_event_open: 241,
    userfaultfd: 282,
    open_by_handle_at: 265,
    name_to_handle_at: 264,
    mount: 40,
    umount2: 39,
    pivot_root: 41,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    move_mount: 429,
    open_tree: 428,
    mount_setattr: 442,
    unshare: 97,
    setns: 268,
    init_module: 105,
    finit_module: 273,
    delete_module: 106,
    kexec_load: 104,
    kexec_file_load: 294,
    reboot: 142,
    swapon: 224,
    swapoff: 225,
    acct: 89,
    quotactl: 60,
    quotactl_fd: 443,
    lookup_dcookie: 18,
    settimeofday: 170,
    clock_settime: 112,
    clock_adjtime: 266,
    adjtimex: 171,
    syslog: 116,
    vhangup: 58,
    ptrace: 117,
    process_vm_readv: 270,
    process_vm_writev: 271,
    kcmp: 272,
    fanotify_init: 262,
    nfsservctl: 42,
  },
};

const TABLES: Partial<Record<NodeJS.Architecture, ArchTable>> = { x64: X86_64, arm64: AARCH64 };

// Classic BPF opcodes (linux/filter.h) and seccomp return values (linux/seccomp.h).
const LD_W_ABS = 0x20;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;
const RET_KILL_PROCESS = 0x8000_0000;
const RET_ALLOW = 0x7fff_0000;
const RET_ERRNO = 0x0005_0000;
const EPERM = 1;
/** Offsets in struct seccomp_data. */
const NR_OFFSET = 0;
const ARCH_OFFSET = 4;

interface Instruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

/**
 * The filter for this host's architecture as struct sock_filter[] bytes, or undefined where Keel
 * has no table (the tier then runs without one, as it did before; `keel doctor` says so).
 */
export function seccompFilter(arch: NodeJS.Architecture = process.arch): Buffer | undefined {
  const table = TABLES[arch];
  if (table === undefined) return undefined;
  const numbers = DENIED_SYSCALLS.flatMap((name) => {
    const nr = table.calls[name];
    return nr === undefined ? [] : [nr];
  });
  const program: Instruction[] = [
    { code: LD_W_ABS, jt: 0, jf: 0, k: ARCH_OFFSET },
    { code: JEQ_K, jt: 1, jf: 0, k: table.audit },
    { code: RET_K, jt: 0, jf: 0, k: RET_KILL_PROCESS },
    { code: LD_W_ABS, jt: 0, jf: 0, k: NR_OFFSET },
  ];
  // Each test jumps to the EPERM return at the very end: the distance shrinks by one per test.
  const tests = numbers.length + (table.x32Bit === undefined ? 0 : 1);
  let remaining = tests;
  const toDeny = () => remaining--; // instructions between this test's next one and the deny
  if (table.x32Bit !== undefined)
    program.push({ code: JGE_K, jt: toDeny(), jf: 0, k: table.x32Bit });
  for (const nr of numbers) program.push({ code: JEQ_K, jt: toDeny(), jf: 0, k: nr });
  program.push({ code: RET_K, jt: 0, jf: 0, k: RET_ALLOW });
  program.push({ code: RET_K, jt: 0, jf: 0, k: RET_ERRNO | EPERM });
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach((ins, i) => {
    bytes.writeUInt16LE(ins.code, i * 8);
    bytes.writeUInt8(ins.jt, i * 8 + 2);
    bytes.writeUInt8(ins.jf, i * 8 + 3);
    bytes.writeUInt32LE(ins.k, i * 8 + 4);
  });
  return bytes;
}
