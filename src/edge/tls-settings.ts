/**
 * What every TLS context of the edge offers (the listener's own and each SNI certificate's): TLS
 * 1.2 and 1.3 only, and on TLS 1.2 only forward-secret key exchange (ECDHE) with AEAD ciphers
 * (Mozilla's "intermediate" list without DHE). No CBC suite (LUCKY13, the padding oracles) and no
 * RSA key exchange (no forward secrecy, ROBOT). The server's order wins, so a client offering CBC
 * first still gets GCM. Both ECDSA (the internal CA, Let's Encrypt's ECDSA chains) and RSA
 * certificates are covered.
 */
export const TLS_SETTINGS = {
  minVersion: 'TLSv1.2',
  ciphers: [
    'TLS_AES_128_GCM_SHA256',
    'TLS_AES_256_GCM_SHA384',
    'TLS_CHACHA20_POLY1305_SHA256',
    'ECDHE-ECDSA-AES128-GCM-SHA256',
    'ECDHE-RSA-AES128-GCM-SHA256',
    'ECDHE-ECDSA-AES256-GCM-SHA384',
    'ECDHE-RSA-AES256-GCM-SHA384',
    'ECDHE-ECDSA-CHACHA20-POLY1305',
    'ECDHE-RSA-CHACHA20-POLY1305',
  ].join(':'),
  honorCipherOrder: true,
} as const;
