import POSIX

// Radio's API speaks the OS layer's types (`init(path:) throws(SystemError)`, a
// `FileDescriptor` to read from); these names let Radio's users write them without
// importing POSIX. They are the same types, not copies.

/// A failed system call: which one, and errno (see `POSIX.SystemError`).
public typealias SystemError = POSIX.SystemError
/// A thin typed wrapper over a file descriptor (see `POSIX.FileDescriptor`).
public typealias FileDescriptor = POSIX.FileDescriptor
/// Writes a whole file or nothing, safely (see `POSIX.AtomicFile`).
public typealias AtomicFile = POSIX.AtomicFile
