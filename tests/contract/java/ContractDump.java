// Prints the Thrift wire contract compiled into a jar as JSON lines, read
// through the generated classes' own metadata (metaDataMap, _Fields, TEnum).
// Used by the contract tests to check thrift/*.thrift against the real server.
import java.lang.reflect.*;
import java.util.*;
import java.util.jar.*;
import org.apache.thrift.*;
import org.apache.thrift.meta_data.*;
import org.apache.thrift.protocol.TType;

public class ContractDump {
  static String q(String s) { return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\""; }

  // `java` is the Java type of the value (the struct's public field, or a type argument of it).
  // Older Thrift generators (0.9.3, Hive 3.1) write a bare FieldValueMetaData(STRUCT) for
  // exceptions and structs declared later in the IDL; the Java type names those.
  static String type(FieldValueMetaData m, Type java) {
    if (m instanceof StructMetaData) {
      return "{\"t\":" + m.type + ",\"struct\":" + q(((StructMetaData) m).structClass.getSimpleName()) + "}";
    }
    if (m instanceof ListMetaData) return "{\"t\":15,\"elem\":" + type(((ListMetaData) m).elemMetaData, typeArg(java, 0)) + "}";
    if (m instanceof SetMetaData) return "{\"t\":14,\"elem\":" + type(((SetMetaData) m).elemMetaData, typeArg(java, 0)) + "}";
    if (m instanceof MapMetaData) {
      MapMetaData mm = (MapMetaData) m;
      return "{\"t\":13,\"key\":" + type(mm.keyMetaData, typeArg(java, 0)) + ",\"value\":" + type(mm.valueMetaData, typeArg(java, 1)) + "}";
    }
    if (m instanceof EnumMetaData) {
      return "{\"t\":16,\"enum\":" + q(((EnumMetaData) m).enumClass.getSimpleName()) + "}";
    }
    if (m.type == TType.STRUCT && java instanceof Class) {
      return "{\"t\":12,\"struct\":" + q(((Class<?>) java).getSimpleName()) + "}";
    }
    return "{\"t\":" + m.type + (m.isBinary() ? ",\"binary\":true" : "") + "}";
  }

  static Type typeArg(Type t, int i) {
    return t instanceof ParameterizedType ? ((ParameterizedType) t).getActualTypeArguments()[i] : null;
  }

  @SuppressWarnings("unchecked")
  static void dumpStruct(Class<?> c) throws Exception {
    Field f = c.getField("metaDataMap");
    Map<TFieldIdEnum, FieldMetaData> map = (Map<TFieldIdEnum, FieldMetaData>) f.get(null);
    StringBuilder sb = new StringBuilder();
    String name = c.getName().substring(c.getName().lastIndexOf('.') + 1);
    sb.append("{\"kind\":\"struct\",\"name\":").append(q(name))
      .append(",\"union\":").append(TUnion.class.isAssignableFrom(c))
      .append(",\"exception\":").append(Exception.class.isAssignableFrom(c))
      .append(",\"fields\":[");
    boolean first = true;
    for (Map.Entry<TFieldIdEnum, FieldMetaData> e : map.entrySet()) {
      if (!first) sb.append(',');
      first = false;
      FieldMetaData md = e.getValue();
      sb.append("{\"id\":").append(e.getKey().getThriftFieldId())
        .append(",\"name\":").append(q(md.fieldName))
        .append(",\"req\":").append(md.requirementType)
        .append(",\"type\":").append(type(md.valueMetaData, javaType(c, md.fieldName))).append('}');
    }
    System.out.println(sb.append("]}"));
  }

  static Type javaType(Class<?> c, String field) {
    try {
      return c.getDeclaredField(field).getGenericType();
    } catch (NoSuchFieldException e) {
      // Unions keep their value in TUnion's own field; their getter has the type.
      try {
        return c.getMethod("get" + Character.toUpperCase(field.charAt(0)) + field.substring(1)).getGenericReturnType();
      } catch (NoSuchMethodException e2) {
        return null;
      }
    }
  }

  static void dumpEnum(Class<?> c) throws Exception {
    StringBuilder sb = new StringBuilder("{\"kind\":\"enum\",\"name\":" + q(c.getSimpleName()) + ",\"values\":{");
    boolean first = true;
    for (Object v : c.getEnumConstants()) {
      if (!first) sb.append(',');
      first = false;
      sb.append(q(((Enum<?>) v).name())).append(':').append(((TEnum) v).getValue());
    }
    System.out.println(sb.append("}}"));
  }

  static void dumpService(Class<?> iface) {
    for (Method m : iface.getMethods()) {
      StringBuilder sb = new StringBuilder("{\"kind\":\"method\",\"service\":" + q(iface.getDeclaringClass().getSimpleName()) + ",\"name\":" + q(m.getName()) + ",\"throws\":[");
      boolean first = true;
      for (Class<?> e : m.getExceptionTypes()) {
        if (e == TException.class) continue;
        if (!first) sb.append(',');
        first = false;
        sb.append(q(e.getSimpleName()));
      }
      System.out.println(sb.append("]}"));
    }
  }

  public static void main(String[] args) throws Exception {
    // args: jar path, then package prefixes to dump
    try (JarFile jar = new JarFile(args[0])) {
      for (Enumeration<JarEntry> en = jar.entries(); en.hasMoreElements();) {
        String n = en.nextElement().getName();
        if (!n.endsWith(".class")) continue;
        String cn = n.substring(0, n.length() - 6).replace('/', '.');
        boolean wanted = false;
        for (int i = 1; i < args.length; i++) wanted |= cn.startsWith(args[i]);
        if (!wanted) continue;
        Class<?> c = Class.forName(cn, false, ContractDump.class.getClassLoader());
        if (c.isEnum() && TEnum.class.isAssignableFrom(c)) dumpEnum(c);
        else if (TBase.class.isAssignableFrom(c) && !Modifier.isAbstract(c.getModifiers())) dumpStruct(c);
        else if (c.isInterface() && c.getSimpleName().equals("Iface")) dumpService(c);
      }
    }
  }
}
