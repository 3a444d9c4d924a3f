/* ns_model_limits: the largest shape a config.json may name, for every architecture (GPT-2 XL: 48
 * layers, 25 heads, n_embd 1600, vocab 50257, 1024 positions, n_inner 6400; Qwen2.5-0.5B: 151936
 * tokens, 32768 positions): every later size computation stays far from overflow. The config
 * readers, the options that set a shape (train, mkmodel) and the grid's indices take their ranges
 * from these. Header only, including nothing. */
#ifndef NS_MODEL_LIMITS_H
#define NS_MODEL_LIMITS_H

#define NS_MODEL_MAX_LAYER 1024u
#define NS_MODEL_MAX_HEAD 4096u
#define NS_MODEL_MAX_EMBD 65536u
#define NS_MODEL_MAX_CTX 1048576u
#define NS_MODEL_MAX_VOCAB 16777216u
#define NS_MODEL_MAX_INNER 1048576u

#endif
