//! The memcached binary protocol over UDP, as the ghost client speaks it to the memcached-class server
//! (workloads/mcd): the 8-byte memcached UDP frame header (request id, sequence number, datagram count, reserved)
//! then binary-protocol messages (24-byte header: magic, opcode, key length, extras length, data type,
//! vbucket/status, body length, opaque, CAS; then extras, key, value), all big-endian.
//!
//! This module is the codec; the client (`client/memcached.rs`) frames its requests and decodes its responses with it.

use std::fmt;

pub const UDP_FRAME_HDR_LEN: usize = 8;
pub const BIN_HDR_LEN: usize = 24;
pub const MAGIC_REQUEST: u8 = 0x80;
pub const MAGIC_RESPONSE: u8 = 0x81;
pub const MAX_KEY_LEN: usize = 250;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Opcode {
    Get = 0x00,
    Set = 0x01,
    Delete = 0x04,
    Noop = 0x0a,
}

/// Response status codes the server uses.
pub mod status {
    pub const OK: u16 = 0x0000;
    pub const KEY_ENOENT: u16 = 0x0001;
    pub const E2BIG: u16 = 0x0003;
    pub const EINVAL: u16 = 0x0004;
    pub const UNKNOWN_COMMAND: u16 = 0x0081;
    pub const ENOMEM: u16 = 0x0082;
}

/// One request to encode.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub op: Opcode,
    pub key: &'a [u8],
    /// The value of a SET (empty otherwise).
    pub value: &'a [u8],
    /// A SET's flags and expiry (its 8 bytes of extras).
    pub flags: u32,
    pub expiry: u32,
    pub opaque: u32,
}

/// One decoded response message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub opcode: u8,
    pub status: u16,
    pub opaque: u32,
    pub cas: u64,
    pub extras: Vec<u8>,
    pub key: Vec<u8>,
    pub value: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McdError {
    /// Fewer bytes than a header or a body needs.
    Short {
        need: usize,
        have: usize,
    },
    BadMagic(u8),
    /// The datagram is not the only one of its message (sequence `seq` of `count`).
    MultiDatagram {
        seq: u16,
        count: u16,
    },
    /// Key plus extras longer than the body.
    BadLengths {
        key: u16,
        extras: u8,
        body: u32,
    },
    KeyTooLong(usize),
}

impl fmt::Display for McdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            McdError::Short { need, have } => write!(f, "memcached message truncated: needs {need} bytes, has {have}"),
            McdError::BadMagic(m) => write!(f, "memcached message has magic {m:#04x}"),
            McdError::MultiDatagram { seq, count } => {
                write!(f, "memcached UDP datagram {seq} of {count}: only single-datagram messages are supported")
            }
            McdError::BadLengths { key, extras, body } => {
                write!(f, "memcached message lengths disagree: key {key} + extras {extras} > body {body}")
            }
            McdError::KeyTooLong(n) => write!(f, "memcached key of {n} bytes (at most {MAX_KEY_LEN})"),
        }
    }
}

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}
fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// Append one datagram's payload: the UDP frame header (`req_id`, sequence 0 of 1) and every request.
pub fn encode_datagram(req_id: u16, reqs: &[Request], out: &mut Vec<u8>) -> Result<(), McdError> {
    out.extend_from_slice(&req_id.to_be_bytes());
    out.extend_from_slice(&[0, 0, 0, 1, 0, 0]);
    for r in reqs {
        if r.key.len() > MAX_KEY_LEN {
            return Err(McdError::KeyTooLong(r.key.len()));
        }
        let extras: &[u8] = if r.op == Opcode::Set { &[0; 8] } else { &[] };
        let value: &[u8] = if r.op == Opcode::Set { r.value } else { &[] };
        let body = (extras.len() + r.key.len() + value.len()) as u32;
        out.push(MAGIC_REQUEST);
        out.push(r.op as u8);
        out.extend_from_slice(&(r.key.len() as u16).to_be_bytes());
        out.push(extras.len() as u8);
        out.extend_from_slice(&[0, 0, 0]); // data type, vbucket
        out.extend_from_slice(&body.to_be_bytes());
        out.extend_from_slice(&r.opaque.to_be_bytes());
        out.extend_from_slice(&[0; 8]); // CAS
        if r.op == Opcode::Set {
            out.extend_from_slice(&r.flags.to_be_bytes());
            out.extend_from_slice(&r.expiry.to_be_bytes());
        }
        out.extend_from_slice(r.key);
        out.extend_from_slice(value);
    }
    Ok(())
}

/// Split a response datagram's payload into its request id and messages.
pub fn decode_datagram(p: &[u8]) -> Result<(u16, Vec<Response>), McdError> {
    if p.len() < UDP_FRAME_HDR_LEN {
        return Err(McdError::Short { need: UDP_FRAME_HDR_LEN, have: p.len() });
    }
    let (seq, count) = (be16(&p[2..]), be16(&p[4..]));
    if seq != 0 || count != 1 {
        return Err(McdError::MultiDatagram { seq, count });
    }
    let mut out = Vec::new();
    let mut rest = &p[UDP_FRAME_HDR_LEN..];
    while !rest.is_empty() {
        if rest.len() < BIN_HDR_LEN {
            return Err(McdError::Short { need: BIN_HDR_LEN, have: rest.len() });
        }
        if rest[0] != MAGIC_RESPONSE {
            return Err(McdError::BadMagic(rest[0]));
        }
        let (klen, extlen, body) = (be16(&rest[2..]), rest[4], be32(&rest[8..]));
        if klen as u32 + extlen as u32 > body {
            return Err(McdError::BadLengths { key: klen, extras: extlen, body });
        }
        let total = BIN_HDR_LEN + body as usize;
        if rest.len() < total {
            return Err(McdError::Short { need: total, have: rest.len() });
        }
        let b = &rest[BIN_HDR_LEN..total];
        let (e, k) = (extlen as usize, klen as usize);
        out.push(Response {
            opcode: rest[1],
            status: be16(&rest[6..]),
            opaque: be32(&rest[12..]),
            cas: u64::from_be_bytes(rest[16..24].try_into().unwrap()),
            extras: b[..e].to_vec(),
            key: b[e..e + k].to_vec(),
            value: b[e + k..].to_vec(),
        });
        rest = &rest[total..];
    }
    Ok((be16(p), out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(key: &[u8], opaque: u32) -> Request<'_> {
        Request { op: Opcode::Get, key, value: &[], flags: 0, expiry: 0, opaque }
    }

    #[test]
    fn get_request_bytes() {
        let mut out = Vec::new();
        encode_datagram(0x1234, &[get(b"foo", 7)], &mut out).unwrap();
        let want: Vec<u8> = [
            &[0x12, 0x34, 0, 0, 0, 1, 0, 0][..],                     // UDP frame header
            &[0x80, 0x00, 0, 3, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 7], // magic, GET, klen 3, body 3, opaque 7
            &[0; 8],                                                 // CAS
            b"foo",
        ]
        .concat();
        assert_eq!(out, want);
    }

    #[test]
    fn set_request_carries_flags_expiry_and_value() {
        let mut out = Vec::new();
        let r = Request { op: Opcode::Set, key: b"k", value: b"vv", flags: 0xdeadbeef, expiry: 9, opaque: 1 };
        encode_datagram(1, &[r], &mut out).unwrap();
        let m = &out[UDP_FRAME_HDR_LEN..];
        assert_eq!((m[1], m[4], be32(&m[8..])), (0x01, 8, 8 + 1 + 2));
        assert_eq!(&m[24..32], &[0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 9]);
        assert_eq!(&m[32..], b"kvv");
        let long = [b'x'; 251];
        assert_eq!(encode_datagram(1, &[get(&long, 0)], &mut Vec::new()), Err(McdError::KeyTooLong(251)));
    }

    /// A GET hit (flags 5, value "bar") then a DELETE miss, as the server sends them.
    fn two_responses() -> Vec<u8> {
        [
            &[0, 9, 0, 0, 0, 1, 0, 0][..],
            &[0x81, 0x00, 0, 0, 4, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 1],
            &[0, 0, 0, 0, 0, 0, 0, 42],
            &[0, 0, 0, 5],
            b"bar",
            &[0x81, 0x04, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2],
            &[0; 8],
        ]
        .concat()
    }

    #[test]
    fn decodes_several_responses() {
        let (id, rs) = decode_datagram(&two_responses()).unwrap();
        assert_eq!(id, 9);
        assert_eq!(rs.len(), 2);
        assert_eq!((rs[0].status, rs[0].opaque, rs[0].cas), (status::OK, 1, 42));
        assert_eq!((rs[0].extras.as_slice(), rs[0].value.as_slice()), (&[0, 0, 0, 5][..], &b"bar"[..]));
        assert_eq!((rs[1].opcode, rs[1].status, rs[1].opaque), (0x04, status::KEY_ENOENT, 2));
    }

    #[test]
    fn refuses_malformed_datagrams() {
        let good = two_responses();
        assert_eq!(decode_datagram(&good[..5]), Err(McdError::Short { need: 8, have: 5 }));
        assert_eq!(decode_datagram(&good[..good.len() - 1]), Err(McdError::Short { need: 24, have: 23 }));
        assert_eq!(decode_datagram(&good[..8 + 30]), Err(McdError::Short { need: 31, have: 30 }));
        assert_eq!(decode_datagram(&good[..8 + 32]), Err(McdError::Short { need: 24, have: 1 }));
        let mut bad = good.clone();
        bad[8] = 0x80;
        assert_eq!(decode_datagram(&bad), Err(McdError::BadMagic(0x80)));
        let mut bad = good.clone();
        bad[5] = 2;
        assert_eq!(decode_datagram(&bad), Err(McdError::MultiDatagram { seq: 0, count: 2 }));
        let mut bad = good;
        bad[8 + 3] = 9; // key length 9 > body 7
        assert_eq!(decode_datagram(&bad), Err(McdError::BadLengths { key: 9, extras: 4, body: 7 }));
        assert!(McdError::KeyTooLong(300).to_string().contains("at most 250"));
    }
}
