//! A bounded, read-only reader of the zip archives Inspect writes (`.eval` logs).
//!
//! The container is read here rather than by the `zip` crate because of what Inspect relies on
//! and that crate does not give: a member name can occur twice in an `.eval` (a requeued
//! sample) and the *last* one counts, while `zip`'s archive collapses entries by name (which
//! of two entries a name then means has changed between its releases), and `zip`'s zstd
//! support builds the C library. The central directory is small and fully specified (APPNOTE
//! 4.3.12–4.3.16, ZIP64 included); every offset and length is checked before use, so a
//! truncated or bit-flipped archive is refused, never a panic.
//!
//! Members are decompressed by well-kept crates: deflate (method 8) by `flate2` over `zlib-rs`,
//! the pure-Rust zlib the `gix` dependency already builds; zstd (method 93, Inspect ≥ 0.3.206)
//! by `ruzstd`, a pure-Rust decoder. `zstd` (the C library through `zstd-sys`) decodes about
//! twice as fast but adds a C build of about a minute on two cores and a C decoder on input
//! that may be hostile; an `.eval` member is a JSON sample of kilobytes to megabytes, where
//! the difference is milliseconds per log. Every member's decompressed size is bounded (a zip
//! bomb is refused after `limit` bytes, whatever its headers claim) and its CRC-32 checked.

use std::io::Read;

/// One member of the central directory.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The name as stored (UTF-8, or refused).
    pub name: String,
    /// Compression method: 0 stored, 8 deflate, 93 zstd.
    pub method: u16,
    flags: u16,
    crc32: u32,
    compressed: u64,
    uncompressed: u64,
    local_offset: u64,
}

/// An archive's bytes and its central directory, in order.
pub struct Archive<'a> {
    bytes: &'a [u8],
    pub entries: Vec<Entry>,
    /// Where each entry's local header and data lie (checked not to overlap).
    spans: Vec<Span>,
}

/// The bytes of one entry: its local header's offset, and its (compressed) data.
#[derive(Debug, Clone)]
struct Span {
    header: usize,
    data: std::ops::Range<usize>,
}

type Res<T> = std::result::Result<T, String>;

/// `N` bytes of `b` at `at`, if they are all there (offsets come from the archive: no
/// arithmetic on them may overflow).
fn bytes_at<const N: usize>(b: &[u8], at: usize) -> Res<[u8; N]> {
    at.checked_add(N)
        .and_then(|end| b.get(at..end))
        .map(|s| s.try_into().expect("N bytes"))
        .ok_or_else(|| "truncated".to_owned())
}
fn u16_at(b: &[u8], at: usize) -> Res<u16> {
    bytes_at::<2>(b, at).map(u16::from_le_bytes)
}
fn u32_at(b: &[u8], at: usize) -> Res<u32> {
    bytes_at::<4>(b, at).map(u32::from_le_bytes)
}
fn u64_at(b: &[u8], at: usize) -> Res<u64> {
    bytes_at::<8>(b, at).map(u64::from_le_bytes)
}

const EOCD: u32 = 0x0605_4b50;
const ZIP64_LOCATOR: u32 = 0x0706_4b50;
const ZIP64_EOCD: u32 = 0x0606_4b50;
const CENTRAL: u32 = 0x0201_4b50;
const LOCAL: u32 = 0x0403_4b50;

/// The most central directory entries read (far above any Inspect log: 2 per sample, so half a
/// million samples): the directory is held in memory, about 150 bytes an entry, before the
/// import's budget can refuse it.
pub const MAX_ENTRIES: u64 = 1_000_000;

impl<'a> Archive<'a> {
    /// Read the central directory of `bytes`.
    pub fn open(bytes: &'a [u8]) -> Res<Self> {
        if bytes.len() < 22 {
            return Err("not a zip archive (too short)".into());
        }
        // The end of central directory record: within the last 64 KiB + 22 bytes.
        let lowest = bytes.len().saturating_sub(22 + 0xFFFF);
        let mut at = None;
        let mut i = bytes.len() - 22;
        loop {
            if u32_at(bytes, i)? == EOCD {
                let comment = u16_at(bytes, i + 20)? as usize;
                if i + 22 + comment == bytes.len() {
                    at = Some(i);
                    break;
                }
            }
            if i == lowest {
                break;
            }
            i -= 1;
        }
        let eocd = at.ok_or_else(|| {
            "not a zip archive: no end of central directory record (a truncated .eval?)".to_owned()
        })?;
        let mut count = u16_at(bytes, eocd + 10)? as u64;
        let mut size = u32_at(bytes, eocd + 12)? as u64;
        let mut offset = u32_at(bytes, eocd + 16)? as u64;
        if count == 0xFFFF || size == 0xFFFF_FFFF || offset == 0xFFFF_FFFF {
            let loc = eocd
                .checked_sub(20)
                .filter(|&l| u32_at(bytes, l).ok() == Some(ZIP64_LOCATOR))
                .ok_or("ZIP64 values without a ZIP64 end of central directory locator")?;
            let rec = usize::try_from(u64_at(bytes, loc + 8)?).map_err(|_| "bad ZIP64 offset")?;
            if u32_at(bytes, rec)? != ZIP64_EOCD {
                return Err("bad ZIP64 end of central directory record".into());
            }
            let field = |k: usize| rec.checked_add(k).ok_or("bad ZIP64 offset");
            count = u64_at(bytes, field(32)?)?;
            size = u64_at(bytes, field(40)?)?;
            offset = u64_at(bytes, field(48)?)?;
        }
        if count > MAX_ENTRIES {
            return Err(format!("{count} members: more than {MAX_ENTRIES}"));
        }
        let start = usize::try_from(offset).map_err(|_| "bad central directory offset")?;
        let end = usize::try_from(size)
            .ok()
            .and_then(|s| start.checked_add(s))
            .filter(|&e| e <= bytes.len())
            .ok_or("the central directory lies outside the archive")?;
        let cd = &bytes[start..end];
        let mut entries = Vec::with_capacity(count.min(65_536) as usize);
        let mut p = 0usize;
        for n in 0..count {
            if u32_at(cd, p).ok() != Some(CENTRAL) {
                return Err(format!("central directory entry {n} is damaged"));
            }
            let flags = u16_at(cd, p + 8)?;
            let method = u16_at(cd, p + 10)?;
            let crc32 = u32_at(cd, p + 16)?;
            let mut compressed = u32_at(cd, p + 20)? as u64;
            let mut uncompressed = u32_at(cd, p + 24)? as u64;
            let name_len = u16_at(cd, p + 28)? as usize;
            let extra_len = u16_at(cd, p + 30)? as usize;
            let comment_len = u16_at(cd, p + 32)? as usize;
            let mut local_offset = u32_at(cd, p + 42)? as u64;
            let name_at = p + 46;
            let name = cd
                .get(name_at..name_at + name_len)
                .ok_or("truncated central directory")?;
            let name = std::str::from_utf8(name)
                .map_err(|_| format!("member name of entry {n} is not UTF-8"))?
                .to_owned();
            let extra = cd
                .get(name_at + name_len..name_at + name_len + extra_len)
                .ok_or("truncated central directory")?;
            // The ZIP64 extra field holds, in this order, each value that is 0xFFFFFFFF.
            let mut e = 0;
            while e + 4 <= extra.len() {
                let id = u16_at(extra, e)?;
                let len = u16_at(extra, e + 2)? as usize;
                let body = extra
                    .get(e + 4..e + 4 + len)
                    .ok_or("truncated extra field")?;
                if id == 0x0001 {
                    let mut q = 0;
                    for v in [&mut uncompressed, &mut compressed, &mut local_offset] {
                        if *v == 0xFFFF_FFFF {
                            *v = u64_at(body, q)?;
                            q += 8;
                        }
                    }
                }
                e += 4 + len;
            }
            entries.push(Entry {
                name,
                method,
                flags,
                crc32,
                compressed,
                uncompressed,
                local_offset,
            });
            p = name_at + name_len + extra_len + comment_len;
        }
        let spans = spans(bytes, &entries, start)?;
        Ok(Archive {
            bytes,
            entries,
            spans,
        })
    }

    /// The index of the last entry named `name` (the last of a repeated name counts).
    pub fn last(&self, name: &str) -> Option<usize> {
        self.entries.iter().rposition(|e| e.name == name)
    }

    /// Entry `i`'s decompressed bytes, refused beyond `limit` bytes, with its CRC-32 checked
    /// (a budget of its own: for the tests and the benchmark).
    pub fn read(&self, i: usize, limit: u64) -> Res<Vec<u8>> {
        self.read_within(i, limit, &mut Budget::new(limit, "the member's bound"))
            .map_err(|e| e.to_string())
    }

    /// Entry `i`'s decompressed bytes, refused beyond `limit` bytes or beyond what is left of
    /// `budget` (which it is charged with, each time a member is read: a member that several
    /// entries share counts once per entry read), with its CRC-32 checked. The bytes are
    /// decoded into one buffer of the size the central directory records (allocated once,
    /// fallibly: [`ReadError::Memory`]), never past it.
    pub fn read_within(
        &self,
        i: usize,
        limit: u64,
        budget: &mut Budget,
    ) -> Result<Vec<u8>, ReadError> {
        let e = self.entries.get(i).ok_or("no such member")?;
        let span = self.spans.get(i).ok_or("no such member")?;
        if e.flags & 1 != 0 {
            return Err("encrypted member".into());
        }
        if e.uncompressed > limit {
            return Err(ReadError::Bound(format!(
                "{} bytes decompressed is over the bound of {limit} bytes (--max-input-bytes)",
                e.uncompressed
            )));
        }
        budget.charge(e.uncompressed)?;
        debug_assert!(span.header < span.data.start);
        let data = &self.bytes[span.data.clone()];
        let size = usize::try_from(e.uncompressed).map_err(|_| "bad member size")?;
        let mut out = Vec::new();
        out.try_reserve_exact(size.saturating_add(1))
            .map_err(|_| ReadError::Memory(e.uncompressed))?;
        // One byte past the recorded size says the header lies (refused below).
        let most = e.uncompressed + 1;
        match e.method {
            0 => out.extend_from_slice(&data[..data.len().min(size + 1)]),
            8 => {
                flate2::read::DeflateDecoder::new(data)
                    .take(most)
                    .read_to_end(&mut out)
                    .map_err(|err| format!("deflate data is damaged: {err}"))?;
            }
            93 => zstd(data, e.uncompressed, &mut out)?,
            m => {
                return Err(ReadError::Refused(format!(
                    "compression method {m} (only stored, deflate and zstd are read)"
                )))
            }
        }
        if out.len() as u64 > e.uncompressed {
            return Err(ReadError::Refused(format!(
                "decompresses to more than the {} bytes its header records",
                e.uncompressed
            )));
        }
        if out.len() as u64 != e.uncompressed {
            return Err(ReadError::Refused(format!(
                "decompresses to {} bytes, not the {} its header records",
                out.len(),
                e.uncompressed
            )));
        }
        if crc32fast::hash(&out) != e.crc32 {
            return Err("CRC-32 mismatch (the member is damaged)".into());
        }
        Ok(out)
    }
}

/// Each entry's local header and data, checked: the header is one, its data lies before the
/// central directory (at `cd`), and no two entries' bytes overlap — an entry is the bytes it
/// points to, so two entries sharing data (a small member read many times over) or reaching
/// into each other are refused, whatever their names.
fn spans(bytes: &[u8], entries: &[Entry], cd: usize) -> Res<Vec<Span>> {
    let mut spans = Vec::with_capacity(entries.len());
    for (n, e) in entries.iter().enumerate() {
        let lo = usize::try_from(e.local_offset).map_err(|_| {
            format!(
                "central directory entry {n} ({}): bad member offset",
                e.name
            )
        })?;
        if u32_at(bytes, lo).ok() != Some(LOCAL) {
            return Err(format!(
                "central directory entry {n} ({}): the member's local header is damaged",
                e.name
            ));
        }
        let name = u16_at(bytes, lo.saturating_add(26))? as usize;
        let extra = u16_at(bytes, lo.saturating_add(28))? as usize;
        let data_at = lo.saturating_add(30 + name + extra);
        let data_end = usize::try_from(e.compressed)
            .ok()
            .and_then(|c| data_at.checked_add(c))
            .filter(|&end| end <= cd)
            .ok_or_else(|| {
                format!(
                    "central directory entry {n} ({}): the member's data lies outside the \
                     archive's members (past the central directory)",
                    e.name
                )
            })?;
        spans.push(Span {
            header: lo,
            data: data_at..data_end,
        });
    }
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by_key(|&i| (spans[i].header, i));
    for w in order.windows(2) {
        let (a, b) = (w[0], w[1]);
        if spans[b].header < spans[a].data.end {
            return Err(format!(
                "central directory entries {a} ({}) and {b} ({}) overlap: {} lies inside the \
                 bytes of {} (at offset {}; an archive's entries each have bytes of their own)",
                entries[a].name, entries[b].name, entries[b].name, entries[a].name, spans[b].header
            ));
        }
    }
    Ok(spans)
}

/// Why a member could not be read: it breaks its format or a bound (a refusal), or the memory
/// for its recorded size could not be had (a failure to run, exit 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error("{0}")]
    Refused(String),
    /// Over a bound (`--max-input-bytes` raises it).
    #[error("{0}")]
    Bound(String),
    /// The bytes the member records it decompresses to.
    #[error("out of memory: {0} bytes for the member's decompressed data could not be allocated")]
    Memory(u64),
}

impl From<String> for ReadError {
    fn from(s: String) -> Self {
        ReadError::Refused(s)
    }
}

impl From<&str> for ReadError {
    fn from(s: &str) -> Self {
        ReadError::Refused(s.to_owned())
    }
}

/// The decompressed bytes one import may read, over every member of every log it reads (a
/// member counted each time it is read), and the memory the values it builds from them may
/// take ([`Budget::kept`]). `what` names the bound in a refusal.
#[derive(Debug, Clone)]
pub struct Budget {
    total: u64,
    left: u64,
    what: &'static str,
    kept: std::cell::Cell<u64>,
}

impl Budget {
    /// `total` bytes decompressed, and as many bytes of values kept.
    pub fn new(total: u64, what: &'static str) -> Self {
        Budget {
            total,
            left: total,
            what,
            kept: std::cell::Cell::new(total),
        }
    }

    /// The same budget, its values bounded to `bytes` of memory.
    pub fn keeping(self, bytes: u64) -> Self {
        Budget {
            kept: std::cell::Cell::new(bytes),
            ..self
        }
    }

    /// The memory the values built from the logs may still take (`json::Reader::kept`).
    pub fn kept(&self) -> &std::cell::Cell<u64> {
        &self.kept
    }

    /// What is left.
    pub fn left(&self) -> u64 {
        self.left
    }

    /// Take `n` bytes, or refuse (taking nothing) when fewer are left.
    pub fn charge(&mut self, n: u64) -> Result<(), ReadError> {
        if n > self.left {
            return Err(ReadError::Bound(format!(
                "decompresses to {n} bytes, which with the {} bytes this import has already \
                 decompressed is over its bound of {} bytes ({})",
                self.total - self.left,
                self.total,
                self.what
            )));
        }
        self.left -= n;
        Ok(())
    }
}

/// The largest zstd window read beyond a frame's own size: a frame may declare a window up to
/// this, whatever it holds (8 MiB, what zstd's levels up to 19 use); a larger window is read
/// only when the member records at least that many bytes.
pub const ZSTD_WINDOW_FREE: u64 = 8 << 20;

/// A zstd frame header (RFC 8878 3.1.1.1): its window size and its content size, if given.
fn zstd_header(data: &[u8]) -> Res<(u64, Option<u64>)> {
    const MAGIC: u32 = 0xFD2F_B528;
    if u32_at(data, 0)? != MAGIC {
        return Err("zstd data is damaged: not a zstd frame".into());
    }
    let d = *data.get(4).ok_or("truncated zstd frame header")?;
    let (fcs_flag, single, reserved, dict_flag) = (d >> 6, d >> 5 & 1 == 1, d >> 3 & 1, d & 3);
    if reserved != 0 {
        return Err("zstd data is damaged: a reserved bit of the frame header is set".into());
    }
    let mut at = 5;
    let mut window = None;
    if !single {
        let w = *data.get(at).ok_or("truncated zstd frame header")?;
        let base = 1u64 << (10 + u64::from(w >> 3));
        window = Some(base + base / 8 * u64::from(w & 7));
        at += 1;
    }
    at += [0, 1, 2, 4][dict_flag as usize];
    let fcs_len = match fcs_flag {
        0 if single => 1,
        0 => 0,
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let fcs = if fcs_len == 0 {
        None
    } else {
        let b = data
            .get(at..at + fcs_len)
            .ok_or("truncated zstd frame header")?;
        let mut v = [0u8; 8];
        v[..fcs_len].copy_from_slice(b);
        let v = u64::from_le_bytes(v);
        Some(if fcs_len == 2 { v + 256 } else { v })
    };
    match (window, fcs) {
        (Some(w), _) => Ok((w, fcs)),
        (None, Some(c)) => Ok((c, fcs)),
        (None, None) => Err("zstd data is damaged: a single-segment frame without its size".into()),
    }
}

/// Decode zstd frames (one or more, skippable frames skipped) into `out`, at most one byte
/// more than the `recorded` size (a longer member is refused by the caller). Each frame's
/// header is read first: a frame whose window (the history the decoder allocates) is larger
/// than both [`ZSTD_WINDOW_FREE`] and the recorded size, or whose content size is larger than
/// what is left of it, is refused before anything is allocated for it.
fn zstd(mut data: &[u8], recorded: u64, out: &mut Vec<u8>) -> Res<()> {
    let most = recorded + 1;
    while !data.is_empty() {
        // A skippable frame: magic 0x184D2A5?, then its length.
        if data.len() >= 8 && u32_at(data, 0)? & 0xFFFF_FFF0 == 0x184D_2A50 {
            let len = u32_at(data, 4)? as usize;
            data = data
                .get(len.checked_add(8).ok_or("truncated zstd skippable frame")?..)
                .ok_or("truncated zstd skippable frame")?;
            continue;
        }
        let budget = most.saturating_sub(out.len() as u64);
        if budget == 0 {
            return Ok(());
        }
        let (window, content) = zstd_header(data)?;
        if window > ZSTD_WINDOW_FREE.max(most) {
            return Err(format!(
                "a zstd frame declares a window of {window} bytes, more than both the member's \
                 recorded size ({recorded} bytes) and {ZSTD_WINDOW_FREE} bytes: the decoder would \
                 allocate it whatever the frame holds"
            ));
        }
        if content.is_some_and(|c| c > budget) {
            return Err(format!(
                "a zstd frame declares {} bytes of content, more than the member's recorded size \
                 ({recorded} bytes)",
                content.unwrap_or_default()
            ));
        }
        let before = data.len();
        let mut dec = ruzstd::decoding::StreamingDecoder::new(&mut data)
            .map_err(|e| format!("zstd data is damaged: {e}"))?;
        (&mut dec)
            .take(budget)
            .read_to_end(out)
            .map_err(|e| format!("zstd data is damaged: {e}"))?;
        if !dec.decoder.is_finished() {
            // Stopped at the bound (the caller refuses the size).
            return Ok(());
        }
        drop(dec);
        // Every frame read consumes its bytes: the loop ends.
        if data.len() >= before {
            return Err("zstd data is damaged: a frame of no bytes".into());
        }
    }
    Ok(())
}

/// Write a zip archive of `members` (name, bytes, method: 0 stored, 8 deflate, 93 zstd), in
/// order, repeated names kept: what Inspect writes, for the tests and the benchmark (which
/// generate `.eval` logs without Inspect).
pub fn write_archive(members: &[(&str, &[u8], u16)]) -> Vec<u8> {
    use std::io::Write;
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data, method) in members {
        let packed = match method {
            8 => {
                let mut e =
                    flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
                e.write_all(data).expect("in memory");
                e.finish().expect("in memory")
            }
            93 => ruzstd::encoding::compress_to_vec(
                *data,
                ruzstd::encoding::CompressionLevel::Fastest,
            ),
            _ => data.to_vec(),
        };
        let crc = crc32fast::hash(data);
        let offset = out.len() as u32;
        let header = |sig: u32, out: &mut Vec<u8>, central: bool| {
            out.extend_from_slice(&sig.to_le_bytes());
            if central {
                out.extend_from_slice(&20u16.to_le_bytes()); // made by
            }
            out.extend_from_slice(&20u16.to_le_bytes()); // needed
            out.extend_from_slice(&0u16.to_le_bytes()); // flags
            out.extend_from_slice(&method.to_le_bytes());
            out.extend_from_slice(&0u32.to_le_bytes()); // time, date
            out.extend_from_slice(&crc.to_le_bytes());
            out.extend_from_slice(&(packed.len() as u32).to_le_bytes());
            out.extend_from_slice(&(data.len() as u32).to_le_bytes());
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(&0u16.to_le_bytes()); // extra
            if central {
                out.extend_from_slice(&[0u8; 6]); // comment length, disk, internal attributes
                out.extend_from_slice(&0u32.to_le_bytes()); // external attributes
                out.extend_from_slice(&offset.to_le_bytes());
            }
            out.extend_from_slice(name.as_bytes());
        };
        header(LOCAL, &mut out, false);
        out.extend_from_slice(&packed);
        header(CENTRAL, &mut central, true);
    }
    let cd_offset = out.len() as u32;
    out.extend_from_slice(&central);
    out.extend_from_slice(&EOCD.to_le_bytes());
    out.extend_from_slice(&[0u8; 4]); // disk numbers
    out.extend_from_slice(&(members.len() as u16).to_le_bytes());
    out.extend_from_slice(&(members.len() as u16).to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&cd_offset.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}
