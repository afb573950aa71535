/** Primitive collections for allocator hot paths (no boxing). */
package io.devalloc.api.collect;
