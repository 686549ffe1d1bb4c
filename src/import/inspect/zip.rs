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

/// The most central directory entries read (far above any Inspect log: 2 per sample).
pub const MAX_ENTRIES: u64 = 4_000_000;

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
        Ok(Archive { bytes, entries })
    }

    /// The index of the last entry named `name` (the last of a repeated name counts).
    pub fn last(&self, name: &str) -> Option<usize> {
        self.entries.iter().rposition(|e| e.name == name)
    }

    /// Entry `i`'s decompressed bytes, refused beyond `limit` bytes, with its CRC-32 checked.
    pub fn read(&self, i: usize, limit: u64) -> Res<Vec<u8>> {
        let e = self.entries.get(i).ok_or("no such member")?;
        if e.flags & 1 != 0 {
            return Err("encrypted member".into());
        }
        if e.uncompressed > limit {
            return Err(format!(
                "{} bytes decompressed is over the bound of {limit} bytes (--max-input-bytes)",
                e.uncompressed
            ));
        }
        let lo = usize::try_from(e.local_offset).map_err(|_| "bad member offset")?;
        if u32_at(self.bytes, lo).ok() != Some(LOCAL) {
            return Err("the member's local header is damaged".into());
        }
        let n = u16_at(self.bytes, lo.saturating_add(26))? as usize;
        let x = u16_at(self.bytes, lo.saturating_add(28))? as usize;
        let data_at = lo.saturating_add(30 + n + x);
        let data = usize::try_from(e.compressed)
            .ok()
            .and_then(|c| self.bytes.get(data_at..data_at.checked_add(c)?))
            .ok_or("the member's data lies outside the archive")?;
        let cap = e.uncompressed.min(limit) as usize;
        let mut out = Vec::with_capacity(cap);
        match e.method {
            0 => out.extend_from_slice(data),
            8 => {
                flate2::read::DeflateDecoder::new(data)
                    .take(limit + 1)
                    .read_to_end(&mut out)
                    .map_err(|err| format!("deflate data is damaged: {err}"))?;
            }
            93 => zstd(data, limit, &mut out)?,
            m => {
                return Err(format!(
                    "compression method {m} (only stored, deflate and zstd are read)"
                ))
            }
        }
        if out.len() as u64 > limit {
            return Err(format!(
                "decompresses to more than the bound of {limit} bytes (--max-input-bytes)"
            ));
        }
        if out.len() as u64 != e.uncompressed {
            return Err(format!(
                "decompresses to {} bytes, not the {} its header records",
                out.len(),
                e.uncompressed
            ));
        }
        if crc32fast::hash(&out) != e.crc32 {
            return Err("CRC-32 mismatch (the member is damaged)".into());
        }
        Ok(out)
    }
}

/// Decode zstd frames (one or more, skippable frames skipped) into `out`, at most `limit + 1`
/// bytes.
fn zstd(mut data: &[u8], limit: u64, out: &mut Vec<u8>) -> Res<()> {
    while !data.is_empty() {
        // A skippable frame: magic 0x184D2A5?, then its length.
        if data.len() >= 8 && u32_at(data, 0)? & 0xFFFF_FFF0 == 0x184D_2A50 {
            let len = u32_at(data, 4)? as usize;
            data = data
                .get(8 + len..)
                .ok_or("truncated zstd skippable frame")?;
            continue;
        }
        let budget = (limit + 1).saturating_sub(out.len() as u64);
        if budget == 0 {
            return Ok(());
        }
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
